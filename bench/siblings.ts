/**
 * Sibling start latency against the server's floor, in one run: N siblings started at once
 * by reference from one recorded snapshot (start call → the sibling's first model request
 * at the offline model), and N empty workflows started at once on the same server by a
 * worker of their own (start call → completed, i.e. their first workflow task done). Where a
 * sibling's time goes is read from its history: start call → started event, then until the
 * worker takes its first workflow task, that task on the worker, and from its end to the request.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Worker, type NativeConnection } from '@temporalio/worker';
import type { ForkflowClient } from '../src/client';
import type { OfflineModel } from '../src/offline';
import type { CacheSafeParams } from '../src/shared/wire/cache-safe-params';
import { percentile } from './kit';

export interface SiblingLatency {
  siblings: number;
  /** Start call → first model request of each sibling, ms. */
  sibling: { p50: number; p95: number };
  /** Start call → completion of each empty workflow, ms. */
  empty: { p50: number; p95: number };
  /** sibling p95 / empty p95: the target is ≤ 2. */
  ratio: number;
  /** A sibling's start latency by phase (ms, p50 and p95 of each): they add up to its total. */
  phases: { name: string; p50: number; p95: number }[];
}

const EVENT = temporal.api.enums.v1.EventType;
const PHASES = ['start call → started event (client, server)', 'started → first workflow task started (server, queue)', 'first workflow task (worker)', 'task completed → model request (activity)'] as const;

/** The times (ms since the epoch) of a sibling's start-up milestones, from its history. */
async function milestones(temporalClient: Client, workflowId: string): Promise<{ started: number; taskStarted: number; taskCompleted: number }> {
  const events = (await temporalClient.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const at = (type: temporal.api.enums.v1.EventType) => {
    const t = events.find((e) => e.eventType === type)?.eventTime;
    if (!t) throw new Error(`${workflowId}: no ${EVENT[type]} in its history`);
    return Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
  };
  return { started: at(EVENT.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED), taskStarted: at(EVENT.EVENT_TYPE_WORKFLOW_TASK_STARTED), taskCompleted: at(EVENT.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) };
}

let emptyBundle: Promise<{ code: string }> | undefined;

/** Starts `n` empty workflows at once on their own task queue and worker; their start → completion times. */
async function emptyStarts(connection: NativeConnection, temporal: Client, namespace: string, n: number): Promise<number[]> {
  emptyBundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('./empty-workflow'), logger: { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} } });
  const taskQueue = `bench-empty-${randomUUID().slice(0, 8)}`;
  const worker = await Worker.create({ connection, namespace, taskQueue, workflowBundle: await emptyBundle });
  return worker.runUntil(
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const t0 = Date.now();
        await temporal.workflow.execute('emptyWorkflow', { taskQueue, workflowId: `${taskQueue}-${i}`, args: [] });
        return Date.now() - t0;
      }),
    ),
  );
}

/** Starts `n` siblings by reference (and `n` empty workflows) and compares their start latency. */
export async function siblingLatency(o: {
  client: ForkflowClient;
  model: OfflineModel;
  connection: NativeConnection;
  namespace: string;
  snapshot: CacheSafeParams;
  n: number;
}): Promise<SiblingLatency> {
  const ref = await o.client.recordSnapshot(o.snapshot);
  const run = randomUUID().slice(0, 8);
  const siblings = await Promise.all(
    Array.from({ length: o.n }, async (_, i) => {
      const marker = `Sibling ${i} of ${run}.`;
      const t0 = Date.now();
      const handle = await o.client.start({ agentId: `bench-sibling-${run}-${i}`, parentRef: ref, prompt: `${marker}\n@reply ok`, budget: { maxTokens: 10_000_000 } });
      const first = await o.model.log.waitFor((e) => e.rawBody.includes(marker), { timeoutMs: 120_000 });
      await handle.result();
      const m = await milestones(o.client.temporal, handle.agentId);
      // The server's clock and this process's are the same machine's: the phases add up to the total.
      return { total: first.receivedAt - t0, phases: [m.started - t0, m.taskStarted - m.started, m.taskCompleted - m.taskStarted, first.receivedAt - m.taskCompleted] };
    }),
  );
  const empty = await emptyStarts(o.connection, o.client.temporal, o.namespace, o.n);
  const totals = siblings.map((s) => s.total);
  const sibling = { p50: percentile(totals, 50), p95: percentile(totals, 95) };
  const floor = { p50: percentile(empty, 50), p95: percentile(empty, 95) };
  const phases = PHASES.map((name, k) => {
    const values = siblings.map((s) => s.phases[k]!);
    return { name, p50: percentile(values, 50), p95: percentile(values, 95) };
  });
  return { siblings: o.n, sibling, empty: floor, ratio: sibling.p95 / floor.p95, phases };
}
