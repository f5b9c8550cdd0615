/**
 * Builds a forkflow worker: workflows + activities on one task queue. Heartbeats are
 * flushed every half second: a cancellation reaches a running model or tool call within
 * about that, and the server notices a dead worker within the 2 s heartbeat timeout.
 * Workflow tasks (and queries) for a dead worker's cached workflows leave its sticky queue
 * after half a second: a retried model call's conversation query waits no longer than that.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { ProviderClients } from '../activities/model/providers/registry';
import type { LiveStreamOptions } from '../activities/model/live-publisher';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { Runtime, Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { ConversationSource, createActivities, McpHost, type FileResponseStore, type OperatorConsent, type ResponseStore } from '../activities';
import { describeConsent, operatorConsent } from './consent';
import { batchSettings, countTokensSetting, encryptedInputsFrom, liveStreamSettings, rootUpdatesSetting, workerTuning, workspaceRootsOf, type WorkerTuning } from './config';
import { responseStoreFromEnv } from './private-stores';
import { encrypts, forkflowDataConverter } from '../payloads/data-converter';
import { startInputOf } from '../payloads/stored';
import type { RunRef } from '../shared/prefix/prefix';
import { setCallGuardLog } from '../activities/call-guard';
import { describeSandbox, sandboxAvailability, workspaceReachWarning, type SandboxAvailability } from '../activities/tools/sandbox';
import { tracingFromEnv, workerTracingOptions, type Tracing } from './tracing';
import { checkBundleFor, concatenateWorkflowModules, PRELOADED_WORKFLOW_MODULES } from './bundle';
import { InboundGuardWorker } from './inbound-guard-worker';
import { envSetting } from '../shared/wire/env-settings';

/**
 * Says at start whether this worker can sandbox Bash (probed once per process), so an
 * operator sees `classifier-only` containment before any fork runs, and names a workspace
 * root its read-only calls cannot enter (see `workspaceReachWarning`).
 */
async function reportSandbox(roots: readonly string[], probe: () => Promise<SandboxAvailability> = sandboxAvailability): Promise<void> {
  const availability = await probe();
  const logger = Runtime.instance().logger;
  // A tool call stopped by its guard is told in the worker's log.
  setCallGuardLog(logger);
  if (availability.available) logger.info(describeSandbox(availability));
  else logger.warn(describeSandbox(availability));
  const unreachable = workspaceReachWarning(availability, roots);
  if (unreachable !== undefined) logger.warn(unreachable);
}

export interface ForkflowWorkerOptions {
  connection: NativeConnection;
  /** The client activities query workflows with; build it with the same `forkflowDataConverter()`. */
  client: Client;
  namespace: string;
  taskQueue: string;
  anthropic: Anthropic;
  /** Named providers (src/worker/providers.ts `createProviderClients`); default: `anthropic` alone. */
  providers?: ProviderClients;
  workspaceRoot: string;
  /** Roots every fork's workspace must lie under (default: FORKFLOW_WORKSPACE_ROOTS and `workspaceRoot`). */
  workspaceRoots?: string[];
  /** One home per tenant, where `memory: user` agents keep their memory (default: FORKFLOW_USER_MEMORY_ROOT; absent: none). */
  userMemoryRoot?: string;
  /** A pre-built workflow bundle (tests bundle once per run); default: bundle src at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  identity?: string;
  conversations?: ConversationSource;
  /** Where spans go (default: OTLP when OTEL_EXPORTER_OTLP_* is set, else nowhere). */
  tracing?: Tracing;
  /** The OS sandbox for Bash (default: probed once per process; tests inject one). */
  sandbox?: () => Promise<SandboxAvailability>;
  /** Where model responses are kept until recorded (default: FORKFLOW_RESPONSE_DIR, see config.ts). */
  responses?: ResponseStore;
  /** Delivery `batch`: poll interval of a submitted Message Batch, in ms (default FORKFLOW_BATCH_POLL_MS or 30 s; tests: short). */
  batchPollMs?: number;
  /** Delivery `batch`: how long a call waits for others to share its batch, in ms (default FORKFLOW_BATCH_WINDOW_MS or 1 s). */
  batchWindowMs?: number;
  /** Delivery `batch`: a batch gathered this many requests goes before its window ends (default FORKFLOW_BATCH_MAX_REQUESTS or 1,000). */
  batchMaxRequests?: number;
  /** Check requests near a context limit with the provider's `count_tokens` (default: on unless FORKFLOW_COUNT_TOKENS=off). */
  countTokens?: boolean;
  /**
   * Abort it when the worker is asked to stop (the `worker` command does on SIGTERM/SIGINT):
   * model calls in flight are handed back to the server at once, and another worker retries
   * them within about 0.3 s, instead of when the SDK's shutdown cancels them.
   */
  stopping?: AbortSignal;
  /**
   * The model gateway `anthropic` is pointed at, if any (FORKFLOW_MODEL_GATEWAY): model calls
   * then carry their call key, and a cancelled call is stopped at the gateway too.
   */
  modelGateway?: string;
  /**
   * Tests only: the offline model's `clockScale` (its time runs that many times faster). Model
   * results then report their cache TTL divided by it, so keep-alive timers (cacheWhileWaiting
   * `keep-alive`) fire in the emulator's time. Default 1: a real provider's TTLs.
   */
  modelClockScale?: number;
  /**
   * Payload codecs and external storage (default: `forkflowDataConverter()`, from the environment).
   * `client` must use the same one: activities query workflows through it.
   */
  dataConverter?: DataConverter;
  /** This host's own queue (`hostQueueOf`): named in the worktrees its activities create. */
  hostQueue?: string;
  /** Capacity settings (default: from FORKFLOW_MAX_* in the environment, see config.ts). */
  tuning?: WorkerTuning;
  /**
   * Live deltas of model calls to `handle.stream()` subscribers (default: on, every 100 ms;
   * FORKFLOW_LIVE_STREAM=off and FORKFLOW_LIVE_STREAM_BATCH_MS from the environment).
   */
  liveStream?: LiveStreamOptions;
  /**
   * From this time on (ms since the epoch; 0: always), take start inputs, signals and updates
   * only encrypted and bound to their workflow (default: FORKFLOW_REQUIRE_ENCRYPTED_INPUTS,
   * config.ts `encryptedInputsFrom`). Needs encryption keys.
   */
  requireEncryptedInputsFrom?: number;
  /**
   * Worker Versioning: this worker serves one build of a deployment. Workflows are pinned to
   * the build they started on; an idle agent, and any run at its next continue-as-new, moves
   * to the deployment's current build (src/workflows/fork/continuation.ts).
   */
  deployment?: { name: string; buildId: string };
  /**
   * What this worker's operator allows a start input to make it run: stdio MCP commands, agent
   * directories, Bash outside the sandbox for `bypassPermissions` (src/worker/consent.ts).
   * Default: from FORKFLOW_MCP_COMMANDS, FORKFLOW_AGENT_DIRS and FORKFLOW_ALLOW_BYPASS_PERMISSIONS; nothing when unset.
   */
  consent?: OperatorConsent;
}

/** How often heartbeats reach the server; a quarter of the 2 s heartbeat timeout. */
const HEARTBEAT_FLUSH = '500ms';

/** How activities read a run's start input (a snapshot's): as the client's converter would. */
const readStartInputBy = (client: Client) => (run: RunRef, workflowType: string) => startInputOf(client, run, workflowType);

/** A conversation source as the worker's own default is built, for callers that keep a handle on it (its stats). */
export function conversationSourceFor(client: Client): ConversationSource {
  return new ConversationSource(client, {}, readStartInputBy(client));
}

/** Delivery `batch` settings: the options', else the environment's. */
const batchOf = (o: Pick<ForkflowWorkerOptions, 'batchPollMs' | 'batchWindowMs' | 'batchMaxRequests'>) => {
  const given = { batchPollMs: o.batchPollMs, batchWindowMs: o.batchWindowMs, batchMaxRequests: o.batchMaxRequests };
  return { ...batchSettings(), ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
};

/** Where tenants' homes are for `memory: user`, when the operator names it. */
const userMemoryOf = (o: Pick<ForkflowWorkerOptions, 'userMemoryRoot'>): { userMemoryRoot?: string } => {
  const root = o.userMemoryRoot ?? (envSetting(process.env, 'FORKFLOW_USER_MEMORY_ROOT') || undefined);
  return root !== undefined ? { userMemoryRoot: root } : {};
};

/** The roots forks' workspaces must lie under. */
const rootsOf = (o: Pick<ForkflowWorkerOptions, 'workspaceRoot' | 'workspaceRoots'>) => o.workspaceRoots ?? workspaceRootsOf(envSetting(process.env, 'FORKFLOW_WORKSPACE_ROOTS'), o.workspaceRoot);

/** The operator's consent: the options', else the environment's (checked against the roots this worker serves). */
function consentOf(o: Pick<ForkflowWorkerOptions, 'consent' | 'workspaceRoot' | 'workspaceRoots'>): OperatorConsent {
  const consent = o.consent ?? operatorConsent({}, rootsOf(o));
  Runtime.instance().logger.info(describeConsent(consent));
  return consent;
}

/** The default store, one per process, swept hourly of what finished runs left behind. */
let defaultStore: FileResponseStore | undefined;
function responseStore(o: ForkflowWorkerOptions): ResponseStore {
  if (o.responses) return o.responses;
  if (!defaultStore) {
    // A store directory another user owns, or open to others, stops the worker here.
    defaultStore = responseStoreFromEnv();
    defaultStore.keepSwept();
  }
  return defaultStore;
}

/**
 * The worker's converter, checked against its client's: activities read conversations
 * through that client, and a client without the worker's codecs cannot read what the
 * worker's workflows answer (it would fail on every retried model call, not at start).
 */
function dataConverterOf(o: Pick<ForkflowWorkerOptions, 'dataConverter' | 'client'>): DataConverter {
  const converter = o.dataConverter ?? forkflowDataConverter();
  const workerCodecs = converter.payloadCodecs?.length ?? 0;
  const clientCodecs = o.client.options.loadedDataConverter.payloadCodecs.length;
  if (workerCodecs !== clientCodecs) {
    throw new Error(`The worker has ${workerCodecs} payload codec(s) and its client ${clientCodecs}: build both with the same DataConverter (forkflowDataConverter()).`);
  }
  return converter;
}

/**
 * The worker's MCP host (src/activities/mcp/host.ts): the stdio sessions it starts for agents
 * and its HTTP connections. It stops with the worker: `run()` closes them when it returns.
 */
function mcpHostFor(o: Pick<ForkflowWorkerOptions, 'connection' | 'namespace' | 'taskQueue'>, dataConverter: DataConverter): McpHost {
  return new McpHost({ connection: o.connection, namespace: o.namespace, taskQueue: o.taskQueue, dataConverter });
}

function withMcpHost(worker: Worker, host: McpHost): Worker {
  const run = worker.run.bind(worker);
  worker.run = async () => {
    try {
      return await run();
    } finally {
      await host.stop();
    }
  };
  return worker;
}

export async function createForkflowWorker(o: ForkflowWorkerOptions): Promise<Worker> {
  const dataConverter = dataConverterOf(o);
  const inputsFrom = inputsFromOf(o, dataConverter);
  if (o.workflowBundle) await checkBundleFor(o.workflowBundle, dataConverter);
  await reportSandbox(rootsOf(o), o.sandbox);
  const mcp = mcpHostFor(o, dataConverter);
  // Workflows run behind the inbound guard: an input that cannot be decoded is refused, not a wedged task.
  const worker = await InboundGuardWorker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    dataConverter,
    ...(o.workflowBundle
      ? { workflowBundle: o.workflowBundle }
      : { workflowsPath: require.resolve('../workflows'), bundlerOptions: { preloadModules: [...PRELOADED_WORKFLOW_MODULES], webpackConfigHook: concatenateWorkflowModules } }),
    activities: createActivities({ anthropic: o.anthropic, providers: o.providers, client: o.client, readStartInput: readStartInputBy(o.client), workspaceRoot: o.workspaceRoot, workspaceRoots: rootsOf(o), ...userMemoryOf(o), conversations: o.conversations, sandbox: o.sandbox, responses: responseStore(o), stopping: o.stopping, modelGateway: o.modelGateway, modelClockScale: o.modelClockScale, hostQueue: o.hostQueue, liveStream: o.liveStream ?? liveStreamSettings(), mcp, countTokens: o.countTokens ?? countTokensSetting(), rootUpdates: rootUpdatesSetting(), consent: consentOf(o), ...batchOf(o) }),
    ...workerTracingOptions(o.tracing ?? tracingFromEnv(), o.workflowBundle !== undefined),
    maxHeartbeatThrottleInterval: HEARTBEAT_FLUSH,
    defaultHeartbeatThrottleInterval: HEARTBEAT_FLUSH,
    stickyQueueScheduleToStartTimeout: '500ms',
    ...(o.tuning ?? workerTuning()),
    ...(o.deployment ? { workerDeploymentOptions: { useWorkerVersioning: true, version: { deploymentName: o.deployment.name, buildId: o.deployment.buildId }, defaultVersioningBehavior: 'PINNED' as const } } : {}),
    ...(o.identity ? { identity: o.identity } : {}),
  });
  (worker as InboundGuardWorker).requireEncryptedInputsFrom = inputsFrom;
  return withMcpHost(worker, mcp);
}

/** When inputs must come encrypted: the option's, else the environment's; only with keys, which it needs. */
function inputsFromOf(o: Pick<ForkflowWorkerOptions, 'requireEncryptedInputsFrom'>, dataConverter: DataConverter): number | undefined {
  const from = o.requireEncryptedInputsFrom ?? encryptedInputsFrom();
  if (from !== undefined && !encrypts(dataConverter)) throw new Error('FORKFLOW_REQUIRE_ENCRYPTED_INPUTS needs encryption keys (FORKFLOW_ENCRYPTION_KEYS or FORKFLOW_ENCRYPTION_KEY_FILE): without them no input is encrypted.');
  return from;
}

/**
 * A worker for a workspace's own task queue: activities only (tools, worktrees, memory
 * checks), on the machine that owns the workspace. Forks name the queue in
 * `workspace.taskQueue`; their workflows run anywhere.
 */
export async function createWorkspaceWorker(o: Omit<ForkflowWorkerOptions, 'workflowBundle'>): Promise<Worker> {
  await reportSandbox(rootsOf(o), o.sandbox);
  const dataConverter = dataConverterOf(o);
  const mcp = mcpHostFor(o, dataConverter);
  const worker = await Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    dataConverter,
    activities: createActivities({ anthropic: o.anthropic, providers: o.providers, client: o.client, readStartInput: readStartInputBy(o.client), workspaceRoot: o.workspaceRoot, workspaceRoots: rootsOf(o), ...userMemoryOf(o), conversations: o.conversations, sandbox: o.sandbox, responses: responseStore(o), stopping: o.stopping, modelGateway: o.modelGateway, hostQueue: o.hostQueue, liveStream: o.liveStream ?? liveStreamSettings(), mcp, countTokens: o.countTokens ?? countTokensSetting(), rootUpdates: rootUpdatesSetting(), consent: consentOf(o), ...batchOf(o) }),
    maxHeartbeatThrottleInterval: HEARTBEAT_FLUSH,
    defaultHeartbeatThrottleInterval: HEARTBEAT_FLUSH,
    ...(o.identity ? { identity: o.identity } : {}),
  });
  return withMcpHost(worker, mcp);
}

/**
 * A worker for a model queue (a fork's `modelQueue`): model calls only. With
 * `requestsPerMinute`, the Temporal server hands out that many of the queue's calls a minute
 * across every worker polling it, whatever host it is on: one provider request limit shared
 * by all of them, kept by the server rather than by any worker. Give every model worker of a
 * queue the same figure (the server keeps the one its latest poller sent).
 */
export async function createModelWorker(o: Omit<ForkflowWorkerOptions, 'workflowBundle' | 'sandbox'> & { requestsPerMinute?: number }): Promise<Worker> {
  const slots = (o.tuning ?? workerTuning()).maxConcurrentActivityTaskExecutions;
  const all = createActivities({ anthropic: o.anthropic, providers: o.providers, client: o.client, readStartInput: readStartInputBy(o.client), workspaceRoot: o.workspaceRoot, workspaceRoots: rootsOf(o), ...userMemoryOf(o), conversations: o.conversations, responses: responseStore(o), stopping: o.stopping, modelGateway: o.modelGateway, modelClockScale: o.modelClockScale, liveStream: o.liveStream ?? liveStreamSettings(), countTokens: o.countTokens ?? countTokensSetting(), rootUpdates: rootUpdatesSetting(), ...batchOf(o) });
  return Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.taskQueue,
    dataConverter: dataConverterOf(o),
    activities: { callModel: all.callModel.bind(all), compactContext: all.compactContext.bind(all) },
    maxHeartbeatThrottleInterval: HEARTBEAT_FLUSH,
    defaultHeartbeatThrottleInterval: HEARTBEAT_FLUSH,
    ...(slots ? { maxConcurrentActivityTaskExecutions: slots } : {}),
    ...(o.requestsPerMinute ? { maxTaskQueueActivitiesPerSecond: o.requestsPerMinute / 60 } : {}),
    ...(o.identity ? { identity: o.identity } : {}),
  });
}
