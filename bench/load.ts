/**
 * `npm run bench:load [-- --forks N] [--turns 5] [--worker-node <node>] [--worker-heap-mb M]
 * [--heap-snapshot]`: N forks started at once on one worker process (5 turns each, a short
 * Read per turn, 1–3 s model latency from the offline model). Prints time to all-complete,
 * turns/s, start latency, the worker's RSS and slot usage, and errors; writes the figures to
 * bench/results/load-<N>.json. The worker runs the recommended tuning (below) unless the
 * environment sets FORKFLOW_MAX_* itself, with a 512 MB heap unless told, on Node ≥ 24 when
 * one is found in .tools/.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleForkflowWorkflows } from '../src/worker/bundle';
import { startDevServer } from '../src/worker/dev-server';
import { printTable } from './kit';
import { runLoad } from './load/run';

const quietLogger = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };

/**
 * The tuning README "Performance" recommends, applied unless the environment sets its own
 * FORKFLOW_MAX_* (then only those apply): so a plain `npm run bench:load` measures it.
 */
const RECOMMENDED: Record<string, string> = {
  FORKFLOW_MAX_CACHED_WORKFLOWS: '200',
  FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS: '8',
  FORKFLOW_MAX_CONCURRENT_ACTIVITIES: '500',
};
const RECOMMENDED_HEAP_MB = 512;

/**
 * Node ≥ 24 for the worker when this process is older and one is at hand in .tools/ (bench:peer
 * installs Node 24 there): on Node 20 hundreds of cached workflows slow every promise of the
 * workflow thread (README "Performance").
 */
function workerNode(flag: string | undefined): string | undefined {
  if (flag) return flag;
  if (Number(process.versions.node.split('.')[0]) >= 24) return undefined;
  const tools = join(__dirname, '..', '.tools');
  const found = existsSync(tools) ? readdirSync(tools).filter((d) => /^node-(2[4-9]|[3-9]\d)\./.test(d)).sort() : [];
  const node = found.length ? join(tools, found.at(-1)!, 'bin', 'node') : undefined;
  return node && existsSync(node) ? node : undefined;
}

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
  const workerHeapMb = values['worker-heap-mb'] === undefined ? RECOMMENDED_HEAP_MB : Number(values['worker-heap-mb']);
  const ownTuning = Object.keys(RECOMMENDED).some((k) => process.env[k]);
  const workerEnv = ownTuning ? {} : RECOMMENDED;
  const node = workerNode(values['worker-node']);
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
      ...(node ? { workerNode: node } : {}),
      workerEnv,
      ...(values['heap-snapshot'] ? { heapSnapshotDir: results } : {}),
      onProgress: (done) => {
        if (done % Math.max(1, Math.floor(forks / 20)) === 0) process.stderr.write('.');
      },
    });
    const tuning = [
      ...Object.entries({ ...process.env, ...workerEnv }).filter(([k]) => k.startsWith('FORKFLOW_MAX_')).map(([k, v]) => `${k}=${v}`),
      `--max-old-space-size=${workerHeapMb}`,
      `node ${node ?? process.version}`,
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
