/**
 * `npm run bench:load [-- --forks N] [--turns 5] [--heap-snapshot]`: N forks started at once
 * on one worker process (5 turns each, a short Read per turn, 1–3 s model latency from the
 * offline model). Prints time to all-complete, turns/s, start latency, the worker's RSS and
 * slot usage, and errors; writes the figures to bench/results/load-<N>.json. The worker's
 * tuning comes from the environment (FORKFLOW_* variables, see src/worker/config.ts).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleForkflowWorkflows } from '../src/worker/bundle';
import { startDevServer } from '../src/worker/dev-server';
import { printTable } from './kit';
import { runLoad } from './load/run';

const quietLogger = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      forks: { type: 'string', default: '500' },
      turns: { type: 'string', default: '5' },
      'heap-snapshot': { type: 'boolean', default: false },
      'worker-node': { type: 'string' },
      'worker-heap-mb': { type: 'string' },
    },
  });
  const forks = Number(values.forks);
  const turns = Number(values.turns);
  if (!Number.isInteger(forks) || forks < 1) throw new Error(`--forks must be a positive integer, got ${values.forks}`);
  if (!Number.isInteger(turns) || turns < 1) throw new Error(`--turns must be a positive integer, got ${values.turns}`);
  const results = join(__dirname, 'results');
  mkdirSync(results, { recursive: true });
  const workerHeapMb = values['worker-heap-mb'] === undefined ? undefined : Number(values['worker-heap-mb']);
  if (workerHeapMb !== undefined && !(Number.isInteger(workerHeapMb) && workerHeapMb >= 64)) throw new Error(`--worker-heap-mb must be a whole number ≥ 64, got ${values['worker-heap-mb']}`);
  // Built here, as a production image builds it (FORKFLOW_WORKFLOW_BUNDLE): the worker's
  // memory is then its own, not webpack's.
  const bundlePath = join(mkdtempSync(join(tmpdir(), 'forkflow-bench-load-bundle-')), 'workflow-bundle.js');
  writeFileSync(bundlePath, await bundleForkflowWorkflows(quietLogger));
  const server = await startDevServer({ headless: true, logLevel: 'error' });
  try {
    const figures = await runLoad({
      address: server.address,
      namespace: server.namespace,
      taskQueue: `bench-load-${Date.now()}`,
      forks,
      turns,
      latencyMs: 1000,
      latencyJitterMs: 2000,
      settleMs: 5000,
      bundlePath,
      ...(workerHeapMb ? { workerHeapMb } : {}),
      ...(values['worker-node'] ? { workerNode: values['worker-node'] } : {}),
      ...(values['heap-snapshot'] ? { heapSnapshotDir: results } : {}),
      onProgress: (done) => {
        if (done % Math.max(1, Math.floor(forks / 20)) === 0) process.stderr.write('.');
      },
    });
    const tuning = [
      ...Object.entries(process.env).filter(([k]) => k.startsWith('FORKFLOW_')).map(([k, v]) => `${k}=${v}`),
      ...(workerHeapMb ? [`--max-old-space-size=${workerHeapMb}`] : []),
      `node ${values['worker-node'] ? 'at ' + values['worker-node'] : process.version}`,
    ].join(' ');
    printTable(`forkflow bench:load — ${forks} forks × ${turns} turns on one worker (model latency 1–3 s)`, [
      ['worker tuning', tuning || 'defaults'],
      ['completed / failed', `${figures.completed} / ${figures.failed}${figures.failures.length ? ` (first: ${figures.failures[0]})` : ''}`],
      ['model requests (errors)', `${figures.modelRequests} (${figures.modelErrors})`],
      ['time to all-complete', `${(figures.wallMs / 1000).toFixed(1)} s`],
      ['aggregate turns/s', figures.turnsPerSecond.toFixed(1)],
      ['start → first model request p50 / p95 / p99', `${figures.startLatencyMs.p50} / ${figures.startLatencyMs.p95} / ${figures.startLatencyMs.p99} ms`],
      ['worker RSS start / peak / at end / +5 s', `${figures.workerRssMb.atStart.toFixed(0)} / ${figures.workerRssMb.peak.toFixed(0)} / ${figures.workerRssMb.atEnd.toFixed(0)} / ${figures.workerRssMb.afterSettle.toFixed(0)} MB`],
      ['max slots used: workflow / activity', `${figures.slots.workflowUsedMax} / ${figures.slots.activityUsedMax} (min available ${figures.slots.workflowAvailableMin} / ${figures.slots.activityAvailableMin}, ${figures.slots.samples} samples)`],
      ['sticky cache max', String(figures.stickyCacheMax ?? 'n/a')],
    ]);
    writeFileSync(join(results, `load-${forks}.json`), JSON.stringify({ at: new Date().toISOString(), tuning, ...figures }, null, 2));
    if (figures.failed > 0) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
