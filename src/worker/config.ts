/**
 * Worker settings from the environment: forkflow's own few variables. Temporal connection
 * settings (shared with clients) are in src/client/settings.ts.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { defaultStateDir } from '../activities/tools/sandbox';
import { TASK_QUEUE } from '../shared/wire/constants';
import { envSetting } from '../shared/wire/env-settings';

/**
 * Capacity of one worker (bench:load measures it; README "Performance"). Unset fields keep
 * the SDK's defaults.
 */
export interface WorkerTuning {
  /** FORKFLOW_MAX_CACHED_WORKFLOWS: workflows kept in memory between their tasks (sticky cache). */
  maxCachedWorkflows?: number;
  /** FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS: workflow tasks taken from the server at once. */
  maxConcurrentWorkflowTaskExecutions?: number;
  /** FORKFLOW_MAX_CONCURRENT_ACTIVITIES: model and tool calls run at once. */
  maxConcurrentActivityTaskExecutions?: number;
  /**
   * FORKFLOW_STICKY_TIMEOUT_MS: how long a workflow task waits for the worker that holds its
   * workflow in cache before any worker may take it (default 500 ms: after a crash, the dead
   * worker's workflows move on quickly). A worker too busy to take it in time makes another
   * worker replay the whole history: raise it (the SDK's default is 10,000) where big trees'
   * roots share busy workers (docs/guides/scale.md).
   */
  stickyQueueScheduleToStartTimeout?: number;
}

const count = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .pipe(z.number().int().min(1, `${name} must be at least 1`))
    .optional();

const tuningSchema = z.object({
  FORKFLOW_MAX_CACHED_WORKFLOWS: count('FORKFLOW_MAX_CACHED_WORKFLOWS'),
  FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS: count('FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS'),
  FORKFLOW_MAX_CONCURRENT_ACTIVITIES: count('FORKFLOW_MAX_CONCURRENT_ACTIVITIES'),
  FORKFLOW_STICKY_TIMEOUT_MS: count('FORKFLOW_STICKY_TIMEOUT_MS'),
});

/** A tuning variable that is set but not a positive whole number: the message names it. */
export class InvalidWorkerTuningError extends Error {
  override name = 'InvalidWorkerTuningError';
}

/** The worker's tuning from the environment; a malformed value throws (a typo must not silently mean "default"). */
export function workerTuning(env: NodeJS.ProcessEnv = process.env): WorkerTuning {
  const set = Object.fromEntries(Object.keys(tuningSchema.shape).filter((k) => env[k]).map((k) => [k, env[k]!.trim()]));
  const parsed = tuningSchema.safeParse(set);
  if (!parsed.success) throw new InvalidWorkerTuningError(parsed.error.issues.map((i) => i.message).join('; '));
  const t = parsed.data;
  return {
    ...(t.FORKFLOW_MAX_CACHED_WORKFLOWS !== undefined ? { maxCachedWorkflows: t.FORKFLOW_MAX_CACHED_WORKFLOWS } : {}),
    ...(t.FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS !== undefined ? { maxConcurrentWorkflowTaskExecutions: t.FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS } : {}),
    ...(t.FORKFLOW_MAX_CONCURRENT_ACTIVITIES !== undefined ? { maxConcurrentActivityTaskExecutions: t.FORKFLOW_MAX_CONCURRENT_ACTIVITIES } : {}),
    ...(t.FORKFLOW_STICKY_TIMEOUT_MS !== undefined ? { stickyQueueScheduleToStartTimeout: t.FORKFLOW_STICKY_TIMEOUT_MS } : {}),
  };
}

/**
 * FORKFLOW_REQUIRE_ENCRYPTED_INPUTS: from when on a worker with encryption keys takes start
 * inputs, signals and updates only encrypted and bound to the workflow they reach
 * (src/payloads/inbound.ts). `always`, or an ISO 8601 time: workflow tasks from that time on
 * (by the task's recorded time, so replays decide alike) refuse plaintext input; earlier ones
 * replay as they ran. Set it to the time of the switch in a deployment with running agents.
 * Unset: plaintext input is taken (the `temporal` CLI, other SDKs' clients).
 */
export function encryptedInputsFrom(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = envSetting(env, 'FORKFLOW_REQUIRE_ENCRYPTED_INPUTS')?.trim();
  if (!value) return undefined;
  if (value === 'always') return 0;
  const at = /^\d{4}-\d\d-\d\dT/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(at)) throw new InvalidWorkerTuningError(`FORKFLOW_REQUIRE_ENCRYPTED_INPUTS must be \`always\` or an ISO 8601 time such as 2026-12-07T10:00:00Z (found "${value.slice(0, 40)}")`);
  return at;
}

export interface ForkflowSettings {
  taskQueue: string;
  /** Default workspace for tool activities on this worker. */
  workspaceRoot: string;
  /**
   * FORKFLOW_WORKSPACE_ROOTS (colon-separated absolute directories): every fork's
   * `workspace.root` must lie, canonically, under one of them. Default: the workspace root.
   */
  workspaceRoots: string[];
  /**
   * FORKFLOW_STATE_DIR: the worker's private state (the response store and the key that
   * authenticates its entries), created 0700 and refused when another user owns it or it is
   * open to others. Default `$XDG_STATE_HOME/forkflow`, else `~/.local/state/forkflow`.
   */
  stateDir: string;
  anthropicApiKey?: string;
  anthropicBaseUrl?: string;
  model?: string;
  /** FORKFLOW_METRICS_ADDRESS: `ip:port` of the Prometheus endpoint (see src/worker/runtime.ts). */
  metricsAddress?: string;
  /**
   * FORKFLOW_RESPONSE_DIR: where model responses wait until their turn is recorded, so a
   * retried call never bills twice. Workers that may take over each other's calls share it
   * (and its key). Default `<stateDir>/responses`; private like the state directory.
   */
  responseDir: string;
  /** FORKFLOW_RESPONSE_JOURNAL: a JSON-lines audit of the responses kept (see FileResponseStore). */
  responseJournal?: string;
  /**
   * FORKFLOW_MODEL_GATEWAY: the URL of a `forkflow gateway` in front of the provider. Model
   * calls go through it, each with its call key, so a call whose worker dies is finished and
   * handed to the retry instead of being paid for again (see src/gateway/gateway.ts).
   */
  modelGateway?: string;
  /**
   * FORKFLOW_HOST_ID: this worker's host, when several hosts serve one task queue. The worker
   * then also serves `<queue>@<host>`, and the worktrees it creates are reached only there.
   */
  hostId?: string;
}

const HOST_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** The host's own task queue; a clear error for an id that could not name one. */
export function hostQueueOf(taskQueue: string, hostId: string): string {
  if (!HOST_ID.test(hostId)) throw new Error(`host id "${hostId}" must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  return `${taskQueue}@${hostId}`;
}

/** A model-queue setting that cannot be used: the message names it. */
export class InvalidModelQueueError extends Error {
  override name = 'InvalidModelQueueError';
}

const modelQueueSchema = z.object({
  queue: z.string().min(1).max(200).optional(),
  requestsPerMinute: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'the model queue\'s rate (--model-rate, FORKFLOW_MODEL_REQUESTS_PER_MINUTE) must be a number of requests per minute')
    .transform(Number)
    .pipe(z.number().positive('the model queue\'s rate must be above 0').max(1_000_000))
    .optional(),
});

/**
 * The model queue this worker also serves (FORKFLOW_MODEL_QUEUE, or `--model-queue`) and the
 * request rate the server keeps on it for every worker (FORKFLOW_MODEL_REQUESTS_PER_MINUTE, or
 * `--model-rate`). A rate without a queue is refused: it would limit nothing.
 */
export function modelQueueSettings(flags: { queue?: string; rate?: string }, env: NodeJS.ProcessEnv = process.env): { queue?: string; requestsPerMinute?: number } {
  const raw = { queue: flags.queue ?? (envSetting(env, 'FORKFLOW_MODEL_QUEUE') || undefined), requestsPerMinute: (flags.rate ?? (envSetting(env, 'FORKFLOW_MODEL_REQUESTS_PER_MINUTE') || undefined))?.trim() };
  const parsed = modelQueueSchema.safeParse(raw);
  if (!parsed.success) throw new InvalidModelQueueError(parsed.error.issues.map((i) => i.message).join('; '));
  if (parsed.data.requestsPerMinute !== undefined && !parsed.data.queue) throw new InvalidModelQueueError('a model rate needs a model queue (--model-queue or FORKFLOW_MODEL_QUEUE)');
  return { ...(parsed.data.queue ? { queue: parsed.data.queue } : {}), ...(parsed.data.requestsPerMinute !== undefined ? { requestsPerMinute: parsed.data.requestsPerMinute } : {}) };
}

/**
 * FORKFLOW_LIVE_STREAM=off: this worker's model calls publish no deltas (forks still end their
 * streams with `done`); FORKFLOW_LIVE_STREAM_BATCH_MS: how often deltas are sent (default 100).
 */
export function liveStreamSettings(env: NodeJS.ProcessEnv = process.env): { enabled: boolean; batchIntervalMs?: number } {
  const ms = Number(envSetting(env, 'FORKFLOW_LIVE_STREAM_BATCH_MS'));
  return { enabled: envSetting(env, 'FORKFLOW_LIVE_STREAM') !== 'off', ...(Number.isInteger(ms) && ms > 0 ? { batchIntervalMs: ms } : {}) };
}

/** A workspace-roots setting that is not a list of absolute directories. */
export class InvalidWorkspaceRootsError extends Error {
  override name = 'InvalidWorkspaceRootsError';
}

/** FORKFLOW_WORKSPACE_ROOTS as a list, with the worker's own workspace root always included. */
export function workspaceRootsOf(value: string | undefined, workspaceRoot: string): string[] {
  const listed = (value ?? '').split(':').map((p) => p.trim()).filter(Boolean);
  const relative = listed.find((p) => !isAbsolute(p));
  if (relative !== undefined) throw new InvalidWorkspaceRootsError(`FORKFLOW_WORKSPACE_ROOTS must list absolute directories separated by ':', and ${JSON.stringify(relative)} is not absolute`);
  return [...new Set([resolve(workspaceRoot), ...listed.map((p) => resolve(p))])];
}

/**
 * Delivery `batch`: FORKFLOW_BATCH_POLL_MS, how often a submitted Message Batch is polled
 * (default 30 s), and FORKFLOW_BATCH_WINDOW_MS, how long a batched call waits for other
 * agents' calls to share its batch (default 1 s; 0 sends each at once), and FORKFLOW_BATCH_MAX_REQUESTS, the most a batch
 * gathers before its window ends (default 1,000). Bad values are ignored.
 */
export function batchSettings(env: NodeJS.ProcessEnv = process.env): { batchPollMs?: number; batchWindowMs?: number; batchMaxRequests?: number } {
  const int = (v: string | undefined, min: number) => (v !== undefined && v.trim() !== '' && Number.isInteger(Number(v)) && Number(v) >= min ? Number(v) : undefined);
  const out = { batchPollMs: int(envSetting(env, 'FORKFLOW_BATCH_POLL_MS'), 1), batchWindowMs: int(envSetting(env, 'FORKFLOW_BATCH_WINDOW_MS'), 0), batchMaxRequests: int(envSetting(env, 'FORKFLOW_BATCH_MAX_REQUESTS'), 1) };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/**
 * FORKFLOW_COUNT_TOKENS=off: decide a request's size near its context limit on the shared
 * estimate alone, for endpoints without `/v1/messages/count_tokens`.
 */
export function countTokensSetting(env: NodeJS.ProcessEnv = process.env): boolean {
  return envSetting(env, 'FORKFLOW_COUNT_TOKENS') !== 'off';
}

/**
 * FORKFLOW_ROOT_UPDATES: Workflow Updates in flight from this process to one tree root
 * (default 4; src/activities/root-gate.ts), for trees started before budget shares only:
 * a tree that lends shares sends its root no updates (docs/guides/scale.md).
 */
export function rootUpdatesSetting(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = envSetting(env, 'FORKFLOW_ROOT_UPDATES')?.trim();
  if (!v) return undefined;
  const parsed = count('FORKFLOW_ROOT_UPDATES').safeParse(v);
  if (!parsed.success) throw new InvalidWorkerTuningError(parsed.error.issues.map((i) => i.message).join('; '));
  return parsed.data;
}

export function forkflowSettings(env: NodeJS.ProcessEnv = process.env): ForkflowSettings {
  const workspaceRoot = envSetting(env, 'FORKFLOW_WORKSPACE') || process.cwd();
  const stateDir = defaultStateDir(env);
  return {
    taskQueue: envSetting(env, 'FORKFLOW_TASK_QUEUE') || TASK_QUEUE,
    workspaceRoot,
    workspaceRoots: workspaceRootsOf(envSetting(env, 'FORKFLOW_WORKSPACE_ROOTS'), workspaceRoot),
    stateDir,
    anthropicApiKey: env.ANTHROPIC_API_KEY || undefined,
    anthropicBaseUrl: env.ANTHROPIC_BASE_URL || undefined,
    model: envSetting(env, 'FORKFLOW_MODEL') || undefined,
    metricsAddress: envSetting(env, 'FORKFLOW_METRICS_ADDRESS') || undefined,
    responseDir: envSetting(env, 'FORKFLOW_RESPONSE_DIR') || join(stateDir, 'responses'),
    responseJournal: envSetting(env, 'FORKFLOW_RESPONSE_JOURNAL') || undefined,
    modelGateway: envSetting(env, 'FORKFLOW_MODEL_GATEWAY') || undefined,
    hostId: envSetting(env, 'FORKFLOW_HOST_ID') || undefined,
  };
}
