/**
 * Builds a forkflow worker: workflows + activities on one task queue. Heartbeats are
 * flushed at least every second so a cancellation reaches a running model or tool call
 * within about a second.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { Client } from '@temporalio/client';
import { Runtime, Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ConversationSource } from '../activities';
import { describeSandbox, sandboxAvailability, type SandboxAvailability } from '../activities/tools/sandbox';
import { tracingFromEnv, workerTracingOptions, type Tracing } from './tracing';

/**
 * Says at start whether this worker can sandbox Bash (probed once per process), so an
 * operator sees `classifier-only` containment before any fork runs.
 */
async function reportSandbox(probe: () => Promise<SandboxAvailability> = sandboxAvailability): Promise<void> {
  const availability = await probe();
  const logger = Runtime.instance().logger;
  if (availability.available) logger.info(describeSandbox(availability));
  else logger.warn(describeSandbox(availability));
}

export interface ForkflowWorkerOptions {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  taskQueue: string;
  anthropic: Anthropic;
  workspaceRoot: string;
  /** A pre-built workflow bundle (tests bundle once per run); default: bundle src at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  identity?: string;
  conversations?: ConversationSource;
  /** Where spans go (default: OTLP when OTEL_EXPORTER_OTLP_* is set, else nowhere). */
  tracing?: Tracing;
  /** The OS sandbox for Bash (default: probed once per process; tests inject one). */
  sandbox?: () => Promise<SandboxAvailability>;
}

export async function createForkflowWorker(o: ForkflowWorkerOptions): Promise<Worker> {
  await reportSandbox(o.sandbox);
  return Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    ...(o.workflowBundle ? { workflowBundle: o.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities({ anthropic: o.anthropic, client: o.client, workspaceRoot: o.workspaceRoot, conversations: o.conversations, sandbox: o.sandbox }),
    ...workerTracingOptions(o.tracing ?? tracingFromEnv(), o.workflowBundle !== undefined),
    maxHeartbeatThrottleInterval: '1s',
    defaultHeartbeatThrottleInterval: '1s',
    ...(o.identity ? { identity: o.identity } : {}),
  });
}

/**
 * A worker for a workspace's own task queue: activities only (tools, worktrees, memory
 * checks), on the machine that owns the workspace. Forks name the queue in
 * `workspace.taskQueue`; their workflows run anywhere.
 */
export async function createWorkspaceWorker(o: Omit<ForkflowWorkerOptions, 'workflowBundle'>): Promise<Worker> {
  await reportSandbox(o.sandbox);
  return Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    activities: createActivities({ anthropic: o.anthropic, client: o.client, workspaceRoot: o.workspaceRoot, conversations: o.conversations, sandbox: o.sandbox }),
    maxHeartbeatThrottleInterval: '1s',
    defaultHeartbeatThrottleInterval: '1s',
    ...(o.identity ? { identity: o.identity } : {}),
  });
}
