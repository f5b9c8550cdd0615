/**
 * One load run (`npm run bench:load` and its smoke test): N forks started at once against
 * one worker process, each `turns` model turns (a short Read per turn) with the offline
 * model answering after `latencyMs` + up to `latencyJitterMs`. Measures time to
 * all-complete, turns/s, start latency (start call → the fork's first model request), the
 * worker's RSS (sampled from /proc), its slot usage (from its Prometheus endpoint) and
 * errors.
 */
import { fork as forkProcess, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient, type ForkHandle, type ForkResult } from '../../src/client';
import { startOfflineModel } from '../../src/offline';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { freePort } from '../../src/worker/dev-server';
import { percentile } from '../kit';

export interface LoadOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  forks: number;
  /** Model turns per fork (the last one replies; the others each Read a small file). */
  turns: number;
  latencyMs: number;
  latencyJitterMs: number;
  /** A pre-built workflow bundle for the worker (default: it bundles at start). */
  bundlePath?: string;
  /** Extra environment of the worker process (its FORKFLOW_* tuning). */
  workerEnv?: Record<string, string>;
  /** The Node binary the worker runs on (default: this process's). */
  workerNode?: string;
  /** `--max-old-space-size` of the worker (each of its V8 heaps: main thread and workflow thread). */
  workerHeapMb?: number;
  /** Write a heap snapshot of the worker once every fork completed (into this directory). */
  heapSnapshotDir?: string;
  /** How long to keep sampling the worker's memory after the last fork completed. */
  settleMs?: number;
  onProgress?: (done: number) => void;
}

export interface SlotSample {
  workflow: { used: number; available: number };
  activity: { used: number; available: number };
}

export interface LoadFigures {
  forks: number;
  turnsPerFork: number;
  completed: number;
  failed: number;
  failures: string[];
  modelRequests: number;
  modelErrors: number;
  wallMs: number;
  turnsPerSecond: number;
  startLatencyMs: { p50: number; p95: number; p99: number };
  workerRssMb: { atStart: number; peak: number; atEnd: number; afterSettle: number; timeline: { t: number; mb: number; done: number }[] };
  slots: { workflowUsedMax: number; activityUsedMax: number; workflowAvailableMin: number; activityAvailableMin: number; samples: number };
  stickyCacheMax?: number;
}

/** The process's resident memory, or NaN once it has exited (Linux: /proc). */
function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** The gauges this run reads from the worker's Prometheus text (labels by worker type). */
function parseMetrics(text: string): { slots: SlotSample; sticky?: number } {
  const slots: SlotSample = { workflow: { used: 0, available: 0 }, activity: { used: 0, available: 0 } };
  let sticky: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^(?:temporal_)?worker_task_slots_(used|available)\{[^}]*worker_type="(\w+)"[^}]*\}\s+([\d.e+]+)/.exec(line);
    if (m) {
      const kind = m[2] === 'WorkflowWorker' ? 'workflow' : m[2] === 'ActivityWorker' ? 'activity' : undefined;
      if (kind) slots[kind][m[1] as 'used' | 'available'] = Number(m[3]);
    }
    const s = /^(?:temporal_)?sticky_cache_size(?:\{[^}]*\})?\s+([\d.e+]+)/.exec(line);
    if (s) sticky = Number(s[1]);
  }
  return { slots, sticky };
}

async function startWorker(o: LoadOptions, modelUrl: string, workspace: string, metricsPort: number): Promise<ChildProcess> {
  const child = forkProcess(join(__dirname, 'worker.ts'), [], {
    ...(o.workerNode ? { execPath: o.workerNode } : {}),
    execArgv: ['-r', 'tsx/cjs', ...(o.workerHeapMb ? [`--max-old-space-size=${o.workerHeapMb}`] : []), ...(o.heapSnapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${o.heapSnapshotDir}`] : [])],
    env: {
      ...process.env,
      ...o.workerEnv,
      BENCH_TEMPORAL_ADDRESS: o.address,
      BENCH_NAMESPACE: o.namespace,
      BENCH_MODEL_URL: modelUrl,
      ...(o.bundlePath ? { BENCH_WORKFLOW_BUNDLE: o.bundlePath } : {}),
      FORKFLOW_TASK_QUEUE: o.taskQueue,
      FORKFLOW_WORKSPACE: workspace,
      FORKFLOW_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [message] = (await Promise.race([once(child, 'message'), once(child, 'exit').then(([code]) => Promise.reject(new Error(`bench:load worker exited (${String(code)}) before it was ready`)))])) as [unknown];
  if (!(message as { ready?: boolean }).ready) throw new Error('bench:load worker sent an unexpected message');
  return child;
}

/**
 * The fork's result. Waiting for it is a long poll of the run's history; with thousands of
 * them open on one connection some fail on the client side ("Failed to get Workflow execution
 * history") while the fork itself goes on: such a wait is retried while the run is not closed,
 * so the bench counts forks that failed, not waits that did.
 */
async function resultOf(client: ForkflowClient, handle: ForkHandle): Promise<ForkResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (attempt === 1 ? handle.result() : client.result(handle.agentId));
    } catch (err) {
      const status = await client.temporal.workflow
        .getHandle(handle.agentId)
        .describe()
        .then((d) => d.status.name)
        .catch(() => 'UNKNOWN');
      if (attempt >= 10 || (status !== 'RUNNING' && status !== 'COMPLETED' && status !== 'UNKNOWN')) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** Runs one load test; the caller owns the server. */
export async function runLoad(o: LoadOptions): Promise<LoadFigures> {
  const workspace = mkdtempSync(join(tmpdir(), 'forkflow-bench-load-'));
  writeFileSync(join(workspace, 'small.txt'), 'one\ntwo\nthree\n');
  // The log is the bench's only record of request times; it lives in this process, not the worker's.
  const model = await startOfflineModel({ latencyMs: o.latencyMs, latencyJitterMs: o.latencyJitterMs });
  const connection = await Connection.connect({ address: o.address });
  const client = new ForkflowClient(new Client({ connection, namespace: o.namespace, dataConverter: forkflowDataConverter() }), { taskQueue: o.taskQueue });
  const metricsPort = await freePort();
  const worker = await startWorker(o, model.url, workspace, metricsPort);
  const pid = worker.pid!;
  let done = 0;
  const t0 = Date.now();
  const timeline: { t: number; mb: number; done: number }[] = [];
  const slotSamples: SlotSample[] = [];
  let stickyMax: number | undefined;
  const sample = async (): Promise<void> => {
    timeline.push({ t: Date.now() - t0, mb: rssMb(pid), done });
    try {
      const { slots, sticky } = parseMetrics(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
      slotSamples.push(slots);
      if (sticky !== undefined) stickyMax = Math.max(stickyMax ?? 0, sticky);
    } catch {
      // A missed scrape only thins the slot figures.
    }
  };
  const atStart = rssMb(pid);
  const sampler = setInterval(() => void sample(), 500);
  const failures: string[] = [];
  try {
    const prompt = (i: number) => `Load fork ${i}.\n@repeat ${o.turns - 1} @tool Read {"file_path":"small.txt"}\n@reply done`;
    const startedAt: number[] = [];
    await Promise.all(
      Array.from({ length: o.forks }, async (_, i) => {
        try {
          startedAt[i] = Date.now();
          const handle = await client.start({ agentId: `load-${o.taskQueue}-${i}`, prompt: prompt(i), maxTurns: o.turns + 2, forkLabel: 'load' });
          const result = await resultOf(client, handle);
          if (result.turns !== o.turns) failures.push(`fork ${i}: ${result.turns} turns, expected ${o.turns}`);
        } catch (err) {
          failures.push(`fork ${i}: ${(err as Error).message}`);
        }
        done += 1;
        o.onProgress?.(done);
      }),
    );
    const wallMs = Date.now() - t0;
    await sample();
    const atEnd = timeline.at(-1)!.mb;
    if (o.heapSnapshotDir) worker.kill('SIGUSR2');
    const settleUntil = Date.now() + (o.settleMs ?? 0);
    while (Date.now() < settleUntil) await new Promise((r) => setTimeout(r, 250));
    await sample();
    const afterSettle = timeline.at(-1)!.mb;

    const entries = model.log.entries().filter((e) => e.path === '/v1/messages');
    const firstRequest = new Map<number, number>();
    for (const e of entries) {
      const i = Number(/Load fork (\d+)\./.exec(e.rawBody)?.[1]);
      if (Number.isInteger(i) && !firstRequest.has(i)) firstRequest.set(i, e.receivedAt);
    }
    const starts = [...firstRequest].map(([i, at]) => at - startedAt[i]!);
    const used = (k: 'workflow' | 'activity') => Math.max(0, ...slotSamples.map((s) => s[k].used));
    const available = (k: 'workflow' | 'activity') => (slotSamples.length ? Math.min(...slotSamples.map((s) => s[k].available)) : NaN);
    return {
      forks: o.forks,
      turnsPerFork: o.turns,
      completed: o.forks - failures.length,
      failed: failures.length,
      failures: failures.slice(0, 10),
      modelRequests: entries.length,
      modelErrors: entries.filter((e) => e.outcome !== 'completed').length,
      wallMs,
      turnsPerSecond: entries.length / (wallMs / 1000),
      startLatencyMs: { p50: percentile(starts, 50), p95: percentile(starts, 95), p99: percentile(starts, 99) },
      workerRssMb: { atStart, peak: Math.max(...timeline.map((s) => s.mb)), atEnd, afterSettle, timeline },
      slots: { workflowUsedMax: used('workflow'), activityUsedMax: used('activity'), workflowAvailableMin: available('workflow'), activityAvailableMin: available('activity'), samples: slotSamples.length },
      ...(stickyMax !== undefined ? { stickyCacheMax: stickyMax } : {}),
    };
  } finally {
    clearInterval(sampler);
    if (worker.exitCode === null && worker.signalCode === null) {
      const exited = once(worker, 'exit');
      worker.kill('SIGTERM');
      // A worker that does not drain within 10 s is stopped hard: the bench must not leave it behind.
      const hard = setTimeout(() => worker.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(hard);
    }
    await connection.close();
    await model.close();
  }
}
