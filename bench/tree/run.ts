/**
 * One tree run (`npm run bench:tree` and its smoke test): a tree of N members under one root
 * (each member 3 model calls, a Read after the first two, 1–2 s of model latency from its
 * script's `@sleep`s), then the same N members as independent forks, on the same server and
 * the same W worker processes. Measures both wall times, the root's updates, signals, history
 * events and bytes (all its runs), each member's gap from a model response to its next
 * request, errors (failed agents, model errors, the workers' "Workflow task not found" and
 * RESOURCE_EXHAUSTED lines), the workers' RSS, whether the root's ledger holds exactly what
 * the model served, and, for a tree that waited for budget, how long a member waited once
 * budget came back against a share's round trip. Optionally SIGKILLs the worker holding the
 * root, or one holding a member, mid-tree, and starts it again.
 */
import { fork as forkProcess, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient, type ForkResult } from '../../src/client';
import { startOfflineModel, type OfflineModel, type RequestLogEntry } from '../../src/offline';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { addUsage, ZERO_USAGE, type Usage } from '../../src/shared/messages-api/anthropic';
import { tokensCharged } from '../../src/shared/tree/budget';
import { percentile } from '../kit';
import { rootHistory, shareWaits, type RootTasks, type ShareWaits } from './history';
import { forkflowConnectionOptions } from '../../src/client/connection-options';

export interface TreeBenchOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  agents: number;
  workers: number;
  /** The root's token budget (default: plenty, so it never binds). */
  budget?: number;
  /** SIGKILL the worker holding the root, or one holding a member, once half the members' calls were served. */
  kill?: 'root' | 'member';
  /** Run the independent forks too (default true). */
  forks?: boolean;
  /** Model latency of each member call: `min` + a spread of up to `spread` ms (scripted, so the root's own calls are quick). */
  latency?: { min: number; spread: number };
  bundlePath?: string;
  workerEnv?: Record<string, string>;
  workerNode?: string;
  workerHeapMb?: number;
  /** Where the workers' output goes (default: dropped after it is scanned). */
  workerLog?: (line: string) => void;
  onProgress?: (what: string) => void;
}

export interface GapFigures {
  p50: number;
  p95: number;
  samples: number;
}

export interface TreeFigures {
  agents: number;
  workers: number;
  tree: { wallMs: number; completed: number; failed: number; failures: string[]; gapsMs: GapFigures };
  forks?: { wallMs: number; completed: number; failed: number; failures: string[]; gapsMs: GapFigures };
  ratio?: number;
  root: { runs: number; updates: number; signals: number; events: number; bytes: number; eventsPerMember: number; tasks: RootTasks };
  modelRequests: number;
  modelErrors: number;
  workerErrors: { taskNotFound: number; resourceExhausted: number; other: number; patchQueryWarnings: number; samples: string[] };
  workerRssMb: { peak: number[] };
  budget: { max: number; charged: number; servedCharged: number; withinBudget: boolean; exact: boolean; mismatches: string[] };
  waits?: ShareWaits;
  killed?: string;
}

const quiet = (): void => undefined;

/** The process's resident memory, or NaN once it has exited (Linux: /proc). */
function rssMb(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

interface WorkerProc {
  identity: string;
  child: ChildProcess;
}

/** Output lines a worker writes that count as errors, by kind. */
class ErrorScan {
  taskNotFound = 0;
  resourceExhausted = 0;
  /** Lines the SDK logs at ERROR, or a worker's own error output. */
  other = 0;
  /** Queries the SDK failed with "Unexpected notifyHasPatch job on non-replay activation" (a WARN; the asker falls back). */
  patchQueryWarnings = 0;
  samples: string[] = [];
  take(line: string): void {
    // Without the terminal's colour codes (ESC [ … m).
    const plain = line.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
    const notFound = /Workflow task not found/i.test(plain);
    const exhausted = /RESOURCE_EXHAUSTED/.test(plain);
    const error = /^\S+ \S+\s+ERROR\b|^\[[^\]]+\] \S+\s+ERROR\b|^(\[[^\]]+\] )?(Error|\w+Error):/.test(plain);
    if (notFound) this.taskNotFound += 1;
    if (exhausted) this.resourceExhausted += 1;
    if (/notifyHasPatch job on non-replay activation/.test(plain)) this.patchQueryWarnings += 1;
    else if (!notFound && !exhausted && error) this.other += 1;
    if ((notFound || exhausted || error) && this.samples.length < 10) this.samples.push(plain.slice(0, 300));
  }
}

async function startWorker(o: TreeBenchOptions, identity: string, modelUrl: string, workspace: string, scan: ErrorScan): Promise<WorkerProc> {
  const child = forkProcess(join(__dirname, '..', 'load', 'worker.ts'), [], {
    ...(o.workerNode ? { execPath: o.workerNode } : {}),
    execArgv: ['-r', 'tsx/cjs', ...(o.workerHeapMb ? [`--max-old-space-size=${o.workerHeapMb}`] : [])],
    env: {
      ...process.env,
      ...o.workerEnv,
      BENCH_TEMPORAL_ADDRESS: o.address,
      BENCH_NAMESPACE: o.namespace,
      BENCH_MODEL_URL: modelUrl,
      BENCH_IDENTITY: identity,
      ...(o.bundlePath ? { BENCH_WORKFLOW_BUNDLE: o.bundlePath } : {}),
      FORKFLOW_TASK_QUEUE: o.taskQueue,
      FORKFLOW_WORKSPACE: workspace,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      scan.take(line);
      (o.workerLog ?? quiet)(`[${identity}] ${line}`);
    });
  }
  const [message] = (await Promise.race([once(child, 'message'), once(child, 'exit').then(([code]) => Promise.reject(new Error(`bench:tree worker ${identity} exited (${String(code)}) before it was ready`)))])) as [unknown];
  if (!(message as { ready?: boolean }).ready) throw new Error('bench:tree worker sent an unexpected message');
  return { identity, child };
}

async function stopWorker(w: WorkerProc): Promise<void> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return;
  const exited = once(w.child, 'exit');
  w.child.kill('SIGTERM');
  const hard = setTimeout(() => w.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(hard);
}

/** A member's script: 3 model calls of 1–2 s each, a Read after the first two. */
function memberScript(tag: string, i: number, latency: { min: number; spread: number }): string {
  // Deterministic spread (no randomness: a tree and its forks get the same delays).
  const delay = (k: number) => latency.min + ((i * 7919 + k * 104_729) % (latency.spread + 1));
  return [`${tag} ${i}.`, `@sleep ${delay(1)} @tool Read {"file_path":"small.txt"}`, `@sleep ${delay(2)} @tool Read {"file_path":"small.txt"}`, `@sleep ${delay(3)} @reply done`].join('\n');
}

/** The root's script: every member at once in the background, then a short reply per wake-up. */
function rootScript(tag: string, members: string[]): string {
  const calls = members.map((prompt, i) => ({ name: 'Agent', input: { description: `member ${i}`, name: `m${i}`, prompt, run_in_background: true } }));
  const wakes = Array.from({ length: Math.ceil((members.length + 5) / 1000) }, () => '@repeat 1000 @reply noted');
  return [`${tag}.`, `@tools ${JSON.stringify(calls)}`, '@reply launched', ...wakes].join('\n');
}

/**
 * Who is asking: the line of a request's first message that starts with a bench tag (each
 * agent's prompt starts with its tag; a top-level fork's first message may open with other
 * blocks before it), else that message's first line.
 */
function askerOf(e: RequestLogEntry): string {
  const first = (e.body as { messages?: { content?: unknown }[] } | undefined)?.messages?.[0]?.content;
  const blocks = Array.isArray(first) ? (first as { text?: unknown }[]).map((b) => (typeof b?.text === 'string' ? b.text : '')) : [typeof first === 'string' ? first : ''];
  const lines = blocks.join('\n').split('\n');
  return lines.find((l) => /^(Tree|Fork) (member|root) of /.test(l)) ?? lines[0] ?? '';
}

/** Each member's gaps from a model response to its next request, by the prefix that tags its requests. */
function gaps(entries: RequestLogEntry[], tag: RegExp): GapFigures {
  const byMember = new Map<string, RequestLogEntry[]>();
  for (const e of entries) {
    const m = tag.exec(askerOf(e));
    if (!m) continue;
    const list = byMember.get(m[1]!) ?? [];
    list.push(e);
    byMember.set(m[1]!, list);
  }
  const out: number[] = [];
  for (const list of byMember.values()) {
    const served = list.filter((e) => e.outcome === 'completed').sort((a, b) => a.receivedAt - b.receivedAt);
    for (let i = 1; i < served.length; i++) out.push(served[i]!.receivedAt - (served[i - 1]!.endedAt ?? served[i - 1]!.receivedAt));
  }
  return { p50: percentile(out, 50), p95: percentile(out, 95), samples: out.length };
}

function usageOf(e: RequestLogEntry): Usage {
  const u = e.usage!;
  return { ...ZERO_USAGE, inputTokens: u.input_tokens, outputTokens: u.output_tokens, cacheReadInputTokens: u.cache_read_input_tokens ?? 0, cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0 };
}

const FIELDS = ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens'] as const;

/**
 * An agent's result. Waiting is a long poll of its history; with hundreds open on one
 * connection some fail on the client side while the agent goes on: such a wait is retried.
 */
async function resultOf(client: ForkflowClient, id: string): Promise<ForkResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.result(id);
    } catch (err) {
      if (attempt >= 10) throw err;
      await new Promise((res) => setTimeout(res, 1000));
    }
  }
}

/** Waits for every agent's result, counting the ones that did not complete their 3 calls. */
async function results(client: ForkflowClient, ids: string[], turns: number): Promise<{ completed: number; failures: string[] }> {
  const failures: string[] = [];
  await Promise.all(
    ids.map(async (id) => {
      const r = await resultOf(client, id).catch((err: unknown) => err as Error);
      if (r instanceof Error) failures.push(`${id}: ${r.message}`);
      else if (r.status !== 'completed' || r.turns !== turns) failures.push(`${id}: ${r.status}, ${r.turns} turns${r.error ? ` (${r.error})` : ''}`);
    }),
  );
  return { completed: ids.length - failures.length, failures };
}

/** Runs the tree (and the same members as forks); the caller owns the server. */
export async function runTree(o: TreeBenchOptions): Promise<TreeFigures> {
  const progress = o.onProgress ?? quiet;
  const latency = o.latency ?? { min: 1000, spread: 1000 };
  const workspace = mkdtempSync(join(tmpdir(), 'forkflow-bench-tree-'));
  writeFileSync(join(workspace, 'small.txt'), 'one\ntwo\nthree\n');
  const model: OfflineModel = await startOfflineModel({ latencyMs: 0 });
  const connection = await Connection.connect(forkflowConnectionOptions({ address: o.address }));
  const client = new ForkflowClient(new Client({ connection, namespace: o.namespace, dataConverter: forkflowDataConverter() }), { taskQueue: o.taskQueue });
  const scan = new ErrorScan();
  const workers: WorkerProc[] = [];
  const peaks: number[] = [];
  const sampler = setInterval(() => workers.forEach((w, i) => (peaks[i] = Math.max(peaks[i] ?? 0, rssMb(w.child.pid) || 0))), 500);
  const run = Math.random().toString(36).slice(2, 8);
  const n = o.agents;
  const budget = o.budget ?? 1_000_000_000;
  try {
    for (let i = 0; i < o.workers; i++) workers.push(await startWorker(o, `bench-tree-worker-${i}`, model.url, workspace, scan));
    const rootId = `bench-tree-${run}`;
    const treeTag = `Tree member of ${run}`;
    const members = Array.from({ length: n }, (_, i) => memberScript(treeTag, i, latency));
    progress(`tree of ${n} on ${o.workers} worker(s)`);
    const t0 = Date.now();
    await client.startAgent({
      agentId: rootId,
      prompt: rootScript(`Tree root of ${run}`, members),
      maxTurns: n + 10,
      // The launch turn writes every member's Agent call (about 70 output tokens each): at the
      // default 8,192 output tokens a tree of 200 was cut off after 125 calls.
      maxOutputTokens: Math.min(128_000, 2_000 + n * 120),
      budget: { maxTokens: budget },
      subAgents: { forkGate: false, maxChildren: Math.min(n, 1000), maxSpawns: n, maxTreeRunning: n + 1, maxTreeSpawns: n, keepCompleted: 16 },
    });
    const killing = o.kill ? killMidway(o, { client, model, workers, workspace, scan }, rootId, treeTag, n) : undefined;
    const root = await resultOf(client, rootId);
    const treeWall = Date.now() - t0;
    const killed = await killing;
    const memberIds = (root.ledger ? Object.keys(root.ledger.nodes) : []).filter((id) => id !== rootId);
    const treeDone = await results(client, memberIds, 3);
    if (memberIds.length !== n) treeDone.failures.push(`${n - memberIds.length} members never started`);
    progress(`tree done in ${(treeWall / 1000).toFixed(1)} s`);
    const treeEntries = model.log.entries().filter((e) => e.path === '/v1/messages' && askerOf(e).includes(run) && !askerOf(e).startsWith('Fork'));
    const history = await rootHistory(client.temporal, rootId);
    const waits = await shareWaits(client.temporal, history);
    const budgetCheck = checkLedger(root, treeEntries, rootId, treeTag, budget);

    let forks: TreeFigures['forks'];
    if (o.forks !== false) {
      const forkTag = `Fork member of ${run}`;
      progress(`${n} independent forks`);
      const f0 = Date.now();
      const ids = await Promise.all(Array.from({ length: n }, (_, i) => client.start({ agentId: `bench-fork-${run}-${i}`, prompt: memberScript(forkTag, i, latency), maxTurns: 10, forkLabel: 'bench-tree' }).then((h) => h.agentId)));
      const done = await results(client, ids, 3);
      const wallMs = Date.now() - f0;
      const entries = model.log.entries().filter((e) => e.path === '/v1/messages' && askerOf(e).includes(forkTag));
      forks = { wallMs, completed: done.completed, failed: done.failures.length, failures: done.failures.slice(0, 10), gapsMs: gaps(entries, new RegExp(`${forkTag} (\\d+)\\.`)) };
      progress(`forks done in ${(wallMs / 1000).toFixed(1)} s`);
    }
    const all = model.log.entries().filter((e) => e.path === '/v1/messages');
    return {
      agents: n,
      workers: o.workers,
      tree: { wallMs: treeWall, completed: treeDone.completed, failed: treeDone.failures.length, failures: treeDone.failures.slice(0, 10), gapsMs: gaps(treeEntries, new RegExp(`${treeTag} (\\d+)\\.`)) },
      ...(forks ? { forks, ratio: treeWall / forks.wallMs } : {}),
      root: { runs: history.runs, updates: history.updates, signals: history.signals, events: history.events, bytes: history.bytes, eventsPerMember: history.events / n, tasks: history.tasks },
      modelRequests: all.length,
      modelErrors: all.filter((e) => e.outcome !== 'completed').length,
      workerErrors: { taskNotFound: scan.taskNotFound, resourceExhausted: scan.resourceExhausted, other: scan.other, patchQueryWarnings: scan.patchQueryWarnings, samples: scan.samples },
      workerRssMb: { peak: peaks.map((p) => Math.round(p)) },
      budget: budgetCheck,
      ...(waits.waited > 0 || waits.immediate > 0 ? { waits } : {}),
      ...(killed ? { killed } : {}),
    };
  } finally {
    clearInterval(sampler);
    await Promise.all(workers.map(stopWorker));
    await connection.close();
    await model.close();
  }
}

/**
 * The root's ledger against what the model served, agent by agent and field by field: every
 * served response charged once, nothing charged that was not served, and the tree's charged
 * tokens (as budgets count them, call by call) within its budget.
 */
function checkLedger(root: ForkResult, entries: RequestLogEntry[], rootId: string, tag: string, budget: number): TreeFigures['budget'] {
  const served = entries.filter((e) => e.outcome === 'completed' && e.usage);
  const byMember = new Map<string, Usage>();
  let servedCharged = 0;
  const memberTag = new RegExp(`${tag} (\\d+)\\.`);
  for (const e of served) {
    servedCharged += tokensCharged(usageOf(e));
    const m = memberTag.exec(askerOf(e));
    const key = m ? `m${m[1]}` : 'root';
    byMember.set(key, addUsage(byMember.get(key) ?? ZERO_USAGE, usageOf(e)));
  }
  const mismatches: string[] = [];
  const nodes = Object.values(root.ledger?.nodes ?? {});
  for (const node of nodes) {
    const key = node.agentId === rootId ? 'root' : /\.(m\d+)-\d+$/.exec(node.agentId)?.[1];
    const want = byMember.get(key ?? '') ?? ZERO_USAGE;
    for (const f of FIELDS) if ((node.usage[f] ?? 0) !== (want[f] ?? 0)) mismatches.push(`${node.agentId} ${f}: ledger ${node.usage[f] ?? 0}, served ${want[f] ?? 0}`);
    byMember.delete(key ?? '');
  }
  for (const [key] of byMember) mismatches.push(`${key}: served but not in the ledger`);
  const charged = nodes.reduce((s, n) => s + n.charged, 0);
  if (charged !== servedCharged) mismatches.push(`charged ${charged}, served ${servedCharged}`);
  return { max: budget, charged, servedCharged, withinBudget: servedCharged <= budget, exact: mismatches.length === 0, mismatches: mismatches.slice(0, 20) };
}

/**
 * Once half the members' calls were served: SIGKILLs the worker that last completed a task of
 * the root (`root`) or of a member on another worker when there is one (`member`), and starts
 * it again under the same name.
 */
async function killMidway(o: TreeBenchOptions, on: { client: ForkflowClient; model: OfflineModel; workers: WorkerProc[]; workspace: string; scan: ErrorScan }, rootId: string, tag: string, n: number): Promise<string> {
  const { client, model, workers } = on;
  const half = Math.ceil((n * 3) / 2);
  const served = new Set<number>();
  await model.log.waitFor(
    (e) => {
      if (e.outcome === 'completed' && askerOf(e).startsWith(tag)) served.add(e.seq);
      return served.size >= half;
    },
    { timeoutMs: 30 * 60_000 },
  );
  const holder = async (id: string) => {
    const events = (await client.temporal.workflow.getHandle(id).fetchHistory()).events ?? [];
    return events.flatMap((e) => (e.workflowTaskCompletedEventAttributes?.identity ? [e.workflowTaskCompletedEventAttributes.identity] : [])).at(-1);
  };
  const rootHolder = await holder(rootId);
  let target = rootHolder;
  let what = `the root's worker (${rootHolder})`;
  if (o.kill === 'member') {
    const status = await client.status(rootId);
    const running = (status.perAgent ?? []).filter((a) => a.agentId !== rootId && a.state === 'running').map((a) => a.agentId);
    for (const id of running) {
      const h = await holder(id).catch(() => undefined);
      if (h && (h !== rootHolder || workers.length === 1)) {
        target = h;
        what = `the worker of member ${id} (${h})`;
        break;
      }
    }
  }
  const i = workers.findIndex((w) => w.identity === target);
  if (i < 0) return `nothing killed: no worker named ${String(target)}`;
  const dead = once(workers[i]!.child, 'exit');
  workers[i]!.child.kill('SIGKILL');
  await dead;
  workers[i] = await startWorker(o, workers[i]!.identity, model.url, on.workspace, on.scan);
  return `SIGKILLed ${what} after ${half} member calls, and started it again`;
}
