/**
 * `npm run bench:tree -- --agents N --workers W [--budget T] [--kill root|member] [--no-forks]
 * [--worker-node <node>] [--worker-heap-mb M]`: a tree of N members under one root (3 model
 * calls each, a Read after the first two, 1–2 s of scripted model latency), then the same N as
 * independent forks, on one dev server and W worker processes. Prints both wall times and their
 * ratio, the root's updates, signals, history events and bytes, each member's gap from a model
 * response to its next request (p50/p95), errors, the workers' RSS, the ledger against what the
 * model served, and share waits; writes the figures to bench/results/tree-<N>-w<W>[-…].json.
 * Workers run README "Performance"'s recommended tuning unless FORKFLOW_MAX_* are set.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleForkflowWorkflows } from '../src/worker/bundle';
import { startDevServer } from '../src/worker/dev-server';
import { printTable } from './kit';
import { runTree, type TreeFigures } from './tree/run';

const quietLogger = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };

const RECOMMENDED: Record<string, string> = {
  FORKFLOW_MAX_CACHED_WORKFLOWS: '200',
  FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS: '8',
  FORKFLOW_MAX_CONCURRENT_ACTIVITIES: '500',
  // A busy worker's root task waits for it rather than being replayed whole by another (docs/guides/scale.md).
  FORKFLOW_STICKY_TIMEOUT_MS: '10000',
};

/** Node ≥ 24 for the workers when this process is older and one is at hand in .tools/ (README "Performance"). */
function workerNode(flag: string | undefined): string | undefined {
  if (flag) return flag;
  if (Number(process.versions.node.split('.')[0]) >= 24) return undefined;
  const tools = join(__dirname, '..', '.tools');
  const found = existsSync(tools) ? readdirSync(tools).filter((d) => /^node-(2[4-9]|[3-9]\d)\./.test(d)).sort() : [];
  const node = found.length ? join(tools, found.at(-1)!, 'bin', 'node') : undefined;
  return node && existsSync(node) ? node : undefined;
}

function positive(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive whole number, got ${raw}`);
  return n;
}

const ms = (v: number) => (Number.isFinite(v) ? `${(v / 1000).toFixed(1)} s` : '—');
const p = (g: { p50: number; p95: number }) => `${Math.round(g.p50)} / ${Math.round(g.p95)} ms`;

function rows(f: TreeFigures): [string, string][] {
  const out: [string, string][] = [
    ['tree wall time', `${ms(f.tree.wallMs)} (${f.tree.completed} of ${f.agents} members completed)`],
    ...(f.forks ? ([['independent forks wall time', `${ms(f.forks.wallMs)} (${f.forks.completed} completed)`], ['ratio tree / forks', `${f.ratio!.toFixed(2)}×`]] as [string, string][]) : []),
    ['root: updates / signals received', `${f.root.updates} / ${f.root.signals}`],
    ['root history: events / bytes (runs)', `${f.root.events} / ${(f.root.bytes / 1024 / 1024).toFixed(2)} MB (${f.root.runs} run${f.root.runs > 1 ? 's' : ''})`],
    ['root history events per member', f.root.eventsPerMember.toFixed(1)],
    ['root workflow tasks: started / timed out waiting (sticky) / timed out running / moved to another worker', `${f.root.tasks.started} / ${f.root.tasks.scheduleToStart} / ${f.root.tasks.startToClose} / ${f.root.tasks.moved}`],
    ['root workflow task, longest', ms(f.root.tasks.longestMs)],
    ['member gap response → next request p50 / p95: tree', p(f.tree.gapsMs)],
    ...(f.forks ? ([['… independent forks', p(f.forks.gapsMs)]] as [string, string][]) : []),
    ['errors: failed agents (tree / forks)', `${f.tree.failed} / ${f.forks?.failed ?? '—'}${f.tree.failures[0] ? ` (first: ${f.tree.failures[0]})` : ''}`],
    ['errors: model requests not completed', `${f.modelErrors} of ${f.modelRequests}`],
    ['errors: "Workflow task not found" / RESOURCE_EXHAUSTED / other worker errors', `${f.workerErrors.taskNotFound} / ${f.workerErrors.resourceExhausted} / ${f.workerErrors.other}`],
    ['SDK warnings: queries failed with "notifyHasPatch job on non-replay activation"', String(f.workerErrors.patchQueryWarnings)],
    ['worker RSS peak', f.workerRssMb.peak.map((m) => `${m} MB`).join(', ')],
    ['budget: max / charged / served', `${f.budget.max} / ${f.budget.charged} / ${f.budget.servedCharged} (${f.budget.withinBudget ? 'within' : 'PAST'} the budget; ledger ${f.budget.exact ? '= served, field by field' : `≠ served: ${f.budget.mismatches[0]}`})`],
  ];
  if (f.waits) {
    out.push(['share asks: answered at once / waited', `${f.waits.immediate} / ${f.waits.waited}`]);
    out.push(['share round trip p50 / p95 / max', `${Math.round(f.waits.roundTripMs.p50)} / ${Math.round(f.waits.roundTripMs.p95)} / ${Math.round(f.waits.roundTripMs.max)} ms`]);
    if (f.waits.waited > 0) out.push(['waited: budget back at the root → grant at the member p50 / p95 / max', `${Math.round(f.waits.afterReturnMs.p50)} / ${Math.round(f.waits.afterReturnMs.p95)} / ${Math.round(f.waits.afterReturnMs.max)} ms`]);
  }
  if (f.killed) out.push(['crash', f.killed]);
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      agents: { type: 'string', default: '200' },
      workers: { type: 'string', default: '1' },
      budget: { type: 'string' },
      kill: { type: 'string' },
      'no-forks': { type: 'boolean', default: false },
      'worker-node': { type: 'string' },
      'worker-heap-mb': { type: 'string', default: '512' },
    },
  });
  const agents = positive('agents', values.agents)!;
  const workers = positive('workers', values.workers)!;
  const budget = positive('budget', values.budget);
  const heap = positive('worker-heap-mb', values['worker-heap-mb'])!;
  if (values.kill !== undefined && values.kill !== 'root' && values.kill !== 'member') throw new Error(`--kill is root or member, got ${values.kill}`);
  const ownTuning = Object.keys(RECOMMENDED).some((k) => process.env[k]);
  const node = workerNode(values['worker-node']);
  const bundlePath = join(mkdtempSync(join(tmpdir(), 'forkflow-bench-tree-bundle-')), 'workflow-bundle.js');
  writeFileSync(bundlePath, await bundleForkflowWorkflows(quietLogger));
  const server = await startDevServer({ headless: true, logLevel: 'error' });
  const results = join(__dirname, 'results');
  mkdirSync(results, { recursive: true });
  // The workers' output, kept for a look after the run (not a result to commit).
  const logFile = join(mkdtempSync(join(tmpdir(), 'forkflow-bench-tree-log-')), 'workers.log');
  const log: string[] = [];
  try {
    const figures = await runTree({
      address: server.address,
      namespace: server.namespace,
      taskQueue: `bench-tree-${Date.now()}`,
      agents,
      workers,
      ...(budget ? { budget } : {}),
      ...(values.kill ? { kill: values.kill } : {}),
      forks: !values['no-forks'],
      bundlePath,
      workerHeapMb: heap,
      ...(node ? { workerNode: node } : {}),
      workerEnv: ownTuning ? {} : RECOMMENDED,
      workerLog: (line) => {
        if (log.length < 20_000) log.push(line);
      },
      onProgress: (what) => process.stderr.write(`[bench:tree] ${what}\n`),
    });
    printTable(`forkflow bench:tree — ${agents} members on ${workers} worker process${workers > 1 ? 'es' : ''}${budget ? `, budget ${budget}` : ''}${values.kill ? `, SIGKILL of the ${values.kill}'s worker` : ''}`, rows(figures));
    const name = `tree-${agents}-w${workers}${budget ? '-budget' : ''}${values.kill ? `-kill-${values.kill}` : ''}`;
    writeFileSync(join(results, `${name}.json`), JSON.stringify({ at: new Date().toISOString(), node: node ?? process.version, ...figures }, null, 2));
    writeFileSync(logFile, log.join('\n'));
    process.stderr.write(`[bench:tree] the workers' output: ${logFile}\n`);
    if (figures.tree.failed > 0 || !figures.budget.exact || !figures.budget.withinBudget) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
