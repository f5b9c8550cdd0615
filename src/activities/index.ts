/**
 * All of forkflow's activities, built from injected dependencies (an Anthropic client, a
 * Temporal client for reading conversations, the workspace root). Workflows import only
 * the type `ForkflowActivities`.
 *
 * @module forkflow/activities
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { ProviderClients } from './model/providers/registry';
import type { Client } from '@temporalio/client';
import { ConversationSource } from './conversation';
import type { ReadStartInput } from './snapshot-inputs';

export { ConversationSource } from './conversation';
import { createConversationActivities } from './held-conversation';
import { createTimeTravelActivities } from './time-travel';
import { createModelActivities } from './model/call-model';
import { createCompactionActivities } from './model/compact';
import { createIsolationActivities } from './isolation';
import { createToolActivities } from './run-tool';
import { createShellTaskActivities } from './shell-tasks';
import { createChildProgressActivities } from './child-progress';
import { createAgentOutputActivities } from './agent-output';
import { createDreamActivities } from './dream';
import { createLedgerClient, createTreeActivities } from './tree';
import { processRootGate } from './root-gate';
import type { SandboxAvailability } from './tools/sandbox';
import type { ResponseStore } from './model/response-store';
import type { LiveStreamOptions } from './model/live-publisher';
import { createMcpActivities } from './mcp/activities';
import type { McpHost } from './mcp/host';
import { NO_CONSENT, type OperatorConsent } from './consent';

export { FileResponseStore, type ResponseStore } from './model/response-store';
export { McpHost, type McpHostOptions } from './mcp/host';
export { NO_CONSENT, type McpCommandRule, type OperatorConsent } from './consent';

export interface ActivityDeps {
  anthropic: Anthropic;
  /** The worker's providers by name (src/worker/providers.ts); calls naming none use `anthropic`. */
  providers?: ProviderClients;
  client: Client;
  workspaceRoot: string;
  stream?: boolean;
  /** Pass one in to read its stats (cache hits, queries); default: a new one. */
  conversations?: ConversationSource;
  /** How the default `conversations` reads a snapshot's input from history (else: by query). */
  readStartInput?: ReadStartInput;
  /** The worker's OS sandbox for Bash; default: probed once per process. */
  sandbox?: () => Promise<SandboxAvailability>;
  /** Roots every fork's workspace must lie under (FORKFLOW_WORKSPACE_ROOTS); default: `workspaceRoot` alone. */
  workspaceRoots?: readonly string[];
  /** Paths no tool may see (default: the worker's state, from the environment; tools/sandbox/protected.ts). */
  protectedPaths?: readonly string[];
  /** Where model responses are kept until recorded (exactly-once billing); none: no such guarantee. */
  responses?: ResponseStore;
  /** Delivery `batch`: poll interval of a submitted Message Batch, in ms (default 30 s). */
  batchPollMs?: number;
  /** Delivery `batch`: how long a call waits for others to share its batch, in ms (default 1 s). */
  batchWindowMs?: number;
  /** Delivery `batch`: a batch gathered this many requests goes before its window ends (default 1,000). */
  batchMaxRequests?: number;
  /** Aborted when the worker starts to stop: model calls in flight are handed back at once. */
  stopping?: AbortSignal;
  /** The model gateway `anthropic` points at, if any: calls then carry their call key. */
  modelGateway?: string;
  /** This host's own task queue (`<queue>@<host>`), named in the worktrees it creates. */
  hostQueue?: string;
  /** Where background shell tasks keep their files (default: `<state dir>/shell-tasks`). */
  shellTaskDir?: string;
  /** Tests only: the offline model's clock scale (see ForkflowWorkerOptions.modelClockScale). */
  modelClockScale?: number;
  /** Live deltas of model calls to stream subscribers (default on; `{ enabled: false }` turns the worker's off). */
  liveStream?: LiveStreamOptions;
  /** Check requests near a context limit with the provider's `count_tokens` (default on; off for endpoints without it). */
  countTokens?: boolean;
  /** This worker's MCP sessions and connections (src/activities/mcp/host.ts); absent: MCP calls are refused. */
  mcp?: McpHost;
  /** Updates in flight from this process to one tree root (FORKFLOW_ROOT_UPDATES; root-gate.ts says why). */
  rootUpdates?: number;
  /**
   * What this worker's operator allows a start input to make it run (consent.ts): stdio MCP
   * commands, Bash outside the sandbox for `bypassPermissions`. Default: nothing.
   */
  consent?: OperatorConsent;
}

export function createActivities(deps: ActivityDeps) {
  const conversations = deps.conversations ?? new ConversationSource(deps.client, {}, deps.readStartInput);
  // One gate per process and limit: the server's limit on a root's updates in flight is the root's, not a worker's.
  const gate = processRootGate(deps.rootUpdates);
  const ledger = createLedgerClient(deps.client, undefined, gate);
  const consent = deps.consent ?? NO_CONSENT;
  return {
    ...createModelActivities({ anthropic: deps.anthropic, providers: deps.providers, conversations, stream: deps.stream, responses: deps.responses, stopping: deps.stopping, gateway: deps.modelGateway, ledger, clockScale: deps.modelClockScale, liveStream: deps.liveStream, countTokens: deps.countTokens, batchPollMs: deps.batchPollMs, batchWindowMs: deps.batchWindowMs, batchMaxRequests: deps.batchMaxRequests }),
    ...createCompactionActivities({ anthropic: deps.anthropic, providers: deps.providers, conversations, responses: deps.responses, stopping: deps.stopping, gateway: deps.modelGateway, ledger, countTokens: deps.countTokens }),
    ...createToolActivities({ conversations, workspaceRoot: deps.workspaceRoot, workspaceRoots: deps.workspaceRoots, protectedPaths: deps.protectedPaths, sandbox: deps.sandbox, responses: deps.responses, consent }),
    ...createShellTaskActivities({ workspaceRoot: deps.workspaceRoot, workspaceRoots: deps.workspaceRoots, protectedPaths: deps.protectedPaths, sandbox: deps.sandbox, hostQueue: deps.hostQueue, shellTaskDir: deps.shellTaskDir, consent }),
    ...createIsolationActivities({ workspaceRoot: deps.workspaceRoot, workspaceRoots: deps.workspaceRoots, protectedPaths: deps.protectedPaths, hostQueue: deps.hostQueue }),
    ...createDreamActivities({ client: deps.client, workspaceRoot: deps.workspaceRoot }),
    ...createTreeActivities({ client: deps.client, gate }),
    ...createChildProgressActivities({ client: deps.client }),
    ...createAgentOutputActivities({ client: deps.client }),
    ...createConversationActivities({ conversations }),
    ...createTimeTravelActivities({ client: deps.client, conversations, ...(deps.readStartInput ? { readStartInput: deps.readStartInput } : {}) }),
    ...createMcpActivities({ host: deps.mcp, consent }),
  };
}

export type ForkflowActivities = ReturnType<typeof createActivities>;
