/**
 * Activity proxies, one per timeout profile (a model call and a grep need different
 * timeouts and retries). Activities are imported as types only: their code never enters
 * the workflow bundle.
 */
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ForkflowActivities } from '../activities';
import type { ForkInput } from '../shared/wire/fork-input';
import { ACTIVITY_PROFILES } from '../shared/wire/constants';
import type { ServiceHookCall, ServiceToolCall } from '../shared/tools/service-contract';

/**
 * Model calls: Temporal owns retries (the SDK client runs with maxRetries 0). Cancellation
 * waits for the activity to confirm, so "killed" means the HTTP request was really aborted.
 * The 2 s heartbeat timeout and the short first retry put a dead worker's call on another
 * worker within about 2.5 s; the beat runs on a timer, so a long silence from the provider
 * (time to first token of a huge prompt) does not trip it. A retry after a response had
 * arrived is served from the response store (src/activities/model/response-store.ts).
 * No attempt limit here: rate limits and overload are waited out however long they last,
 * and the activity itself gives up on other errors after MODEL_ATTEMPTS
 * (src/activities/model/errors.ts).
 */
export const model = proxyActivities<Pick<ForkflowActivities, 'callModel'>>({
  startToCloseTimeout: ACTIVITY_PROFILES.model.startToCloseMs,
  heartbeatTimeout: ACTIVITY_PROFILES.model.heartbeatMs,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: Number.POSITIVE_INFINITY },
});

/**
 * Model calls of a fork with delivery `batch`: one activity per call submits a one-request
 * Message Batch and polls it while heartbeating (src/activities/model/batch-call.ts), so a
 * batched turn costs the history of an interactive one. The provider answers within 24 hours.
 */
export const batchModel = proxyActivities<Pick<ForkflowActivities, 'callModel'>>({
  startToCloseTimeout: ACTIVITY_PROFILES.batchModel.startToCloseMs,
  heartbeatTimeout: ACTIVITY_PROFILES.batchModel.heartbeatMs,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: Number.POSITIVE_INFINITY },
});

/**
 * Where a fork's model calls are scheduled: its `modelQueue` when it names one (a queue whose
 * rate limit the server enforces for every worker on it), else the workflow's own queue.
 */
export function modelQueueOf(input: Pick<ForkInput, 'modelQueue'>): { taskQueue?: string } {
  return input.modelQueue ? { taskQueue: input.modelQueue } : {};
}

/**
 * forkflow compaction calls (src/workflows/fork/compaction.ts): a model call like any, with the
 * model profile's timeouts and retries; a retry after a summary arrived is served from the
 * response store, so a compaction is billed once.
 */
export const compactor = proxyActivities<Pick<ForkflowActivities, 'compactContext'>>({
  startToCloseTimeout: ACTIVITY_PROFILES.model.startToCloseMs,
  heartbeatTimeout: ACTIVITY_PROFILES.model.heartbeatMs,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: Number.POSITIVE_INFINITY },
});

/**
 * Keep-alive calls (cacheWhileWaiting `keep-alive`): the model activity again, on a short
 * leash. One is worth sending only before the cache entry it refreshes expires, so it is not
 * retried for long: a failed one ends the keep-alives of that wait (the next turn re-writes).
 */
export const keepAliveModel = proxyActivities<Pick<ForkflowActivities, 'callModel'>>({
  startToCloseTimeout: '60s',
  heartbeatTimeout: ACTIVITY_PROFILES.model.heartbeatMs,
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '2s', maximumAttempts: 3 },
});

/**
 * Tool calls: a tool's own failures come back as data (is_error), so retries here only cover
 * infrastructure; the task queue is chosen per call (workspace affinity). A lost worker is
 * retried without an attempt limit (a dead worker is not the tool failing); the activity
 * itself stops a call that is unsafe to re-run, and a real failure after three attempts
 * (src/activities/run-tool.ts). The hour is a backstop for a workspace nobody serves.
 */
export const tools = proxyActivities<Pick<ForkflowActivities, 'runTool'>>({
  startToCloseTimeout: ACTIVITY_PROFILES.tool.startToCloseMs,
  scheduleToCloseTimeout: ACTIVITY_PROFILES.tool.scheduleToCloseMs,
  heartbeatTimeout: ACTIVITY_PROFILES.tool.heartbeatMs,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: Number.POSITIVE_INFINITY },
});

/**
 * Short read-only tools (Read, Glob, Grep) on the workflow's own task queue run as local
 * activities: same worker, no extra server round trip, recorded once as a marker. This
 * halves the Temporal round trips of a typical turn (see bench/loop.ts).
 */
export const localTools = proxyLocalActivities<Pick<ForkflowActivities, 'runTool'>>({
  startToCloseTimeout: '2m',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
});

/** Setting up and checking where a fork may act (memory dir, worktrees): on the workspace's queue. */
export const isolation = proxyActivities<Pick<ForkflowActivities, 'pinMemoryDir' | 'openAgentMemory' | 'auditWrites' | 'createWorktree' | 'finishWorktree'>>({
  startToCloseTimeout: '5m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/**
 * The tree's root, asked from a sub-agent (admission by update; the visibility count of runs
 * recorded before the ledger), on the workflow's own worker. Admission is idempotent by agent
 * id, so a retry never admits twice. Patient: a big tree's root serves every reservation and
 * charge of the tree too, and the server lets a workflow have only 10 updates in flight, so an
 * admission may wait its turn for a while (the activity asks again while the server is busy);
 * giving up would refuse a child the tree has room for. A local activity's options are not
 * recorded, so runs recorded with shorter ones replay unchanged.
 */
export const tree = proxyLocalActivities<Pick<ForkflowActivities, 'countRunningAgents' | 'admitAgent' | 'routeMessage'>>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '500ms', maximumAttempts: 3 },
});

/**
 * A prefix held by reference, read whole before a run moves to a new build. On the old build's
 * workers (the run is pinned to it), which still serve while the run is open.
 */
export const conversation = proxyActivities<Pick<ForkflowActivities, 'readHeldConversation'>>({
  startToCloseTimeout: '5m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
});

/**
 * Time travel before a fork's set-up: resolving a `from` point (a query of the agent's runs,
 * which a closed run answers by replay) and reading a counterfactual fork's parent context.
 * Bad points fail at once (non-retryable); anything else is retried a few times.
 */
export const timeTravel = proxyActivities<Pick<ForkflowActivities, 'resolveForkPoint' | 'readRequestContext'>>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/**
 * A service's tools and hooks (src/shared/tools/service-contract.ts): activities of a fixed
 * type on the service's own queue, with options per call (the route's or the hook's
 * timeouts). One attempt each: the workflow decides about another (src/workflows/fork/
 * service-call.ts), so a tool that must not run twice never does, and nothing loops. Cancelled
 * without waiting: a worker in another language may not heartbeat, so it may never confirm.
 */
export const service = proxyActivities<{
  'forkflow.callTool': (input: ServiceToolCall) => Promise<unknown>;
  'forkflow.hook': (input: ServiceHookCall) => Promise<unknown>;
}>({
  startToCloseTimeout: '60s',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { maximumAttempts: 1 },
});

/**
 * MCP servers (src/activities/mcp/): opening one at an agent's start (connect and list
 * tools: a server's own failures come back as data, so a second attempt only covers a lost
 * worker), calling a tool (heartbeating; one attempt: the workflow opens a lost session again
 * and decides about a re-run, src/workflows/fork/mcp-call.ts), closing a stdio session.
 */
export const mcp = proxyActivities<Pick<ForkflowActivities, 'mcpOpen' | 'mcpCall' | 'mcpClose'>>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: ACTIVITY_PROFILES.tool.heartbeatMs,
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { maximumAttempts: 1 },
});

/**
 * Background shell tasks (src/workflows/fork/shell-tasks.ts) on their host: starting, reading
 * and stopping one are short calls, retried while the host is away (a task is found again by
 * its files, so a second start or stop does nothing twice).
 */
export const shellTasks = proxyActivities<Pick<ForkflowActivities, 'startShellTask' | 'readShellTask' | 'stopShellTask'>>({
  startToCloseTimeout: '60s',
  scheduleToCloseTimeout: ACTIVITY_PROFILES.tool.scheduleToCloseMs,
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: Number.POSITIVE_INFINITY },
});

/**
 * Following a background shell task until it ends or stalls: heartbeating like a tool call, so
 * a lost worker's watch is retried on the host within seconds and picks the task up again.
 * Cancelled without waiting: cancelling a watch never stops the task (TaskStop does).
 */
export const shellWatch = proxyActivities<Pick<ForkflowActivities, 'watchShellTask'>>({
  startToCloseTimeout: '25h',
  heartbeatTimeout: ACTIVITY_PROFILES.tool.heartbeatMs,
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: Number.POSITIVE_INFINITY },
});

/** A running sub-agent's progress (its status query), for TaskOutput: on the workflow's own worker, short. */
export const progress = proxyLocalActivities<Pick<ForkflowActivities, 'childProgress' | 'childrenProgress' | 'teamRoster'>>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', maximumAttempts: 3 },
});

/** A sub-agent's output file for its parent's Read (its status and newest transcript pages): on the workflow's own worker. */
export const agentOutput = proxyLocalActivities<Pick<ForkflowActivities, 'readAgentOutput'>>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumAttempts: 3 },
});
