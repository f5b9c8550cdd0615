/**
 * The tool activity: runs one built-in tool call in this worker's workspace. Large tool
 * inputs are read from the conversation instead of travelling in the activity input.
 * A tool's own failures come back as data (`isError`); cancellation propagates.
 *
 * A lost worker is not a tool failure. Temporal retries the call without an attempt limit
 * (src/workflows/activities.ts); here each attempt decides what a retry may do:
 * - a call that is safe to run again (`rerunnable`) simply runs again;
 * - one that is not, and whose earlier attempt had begun running (its heartbeat says so),
 *   is not run again: the model gets "interrupted by a worker restart after N s; it may
 *   have partly run" and decides;
 * - a real failure thrown by an attempt (not a timeout) stops after three attempts, as before.
 */
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { toolUsesOf } from '../shared/messages-api/anthropic';
import type { ToolCallInput, ToolCallResult } from '../shared/wire/activity-io';
import type { ConversationSource } from './conversation';
import type { ResponseStore } from './model/response-store';
import { CallMachineryError, guardCall } from './call-guard';
import { bypassRefusal, type OperatorConsent } from './consent';
import { startHeartbeat } from './heartbeat';
import { runBuiltinTool } from './tools';
import { protectedPaths, sandboxAvailability, type Refusal, type SandboxAvailability, type SandboxLimits } from './tools/sandbox';
import { classifyShellCommand } from './tools/shell';
import { SHELL_OPT_IN_PROGRAMS } from '../shared/wire/activity-io';
import type { ToolContext, WritePolicy } from './tools/types';
import { resolveWorkspace, type WorkspacePolicy } from './tools/workspace';
import { AgentMemoryError } from './agent-memory';
import { canonicalRoots, userMemoryDir } from './user-memory';

export interface ToolDeps {
  conversations: ConversationSource;
  /** Default workspace root of this worker. */
  workspaceRoot: string;
  /** Roots every fork's workspace must lie under (FORKFLOW_WORKSPACE_ROOTS); default: `workspaceRoot` alone. */
  workspaceRoots?: readonly string[];
  /** Paths no tool of any fork may see (default: `protectedPaths()` of this process's environment). */
  protectedPaths?: readonly string[];
  /** What OS sandbox this worker has for Bash (default: probed once per process). */
  sandbox?: () => Promise<SandboxAvailability>;
  /** Resource limits of a sandboxed Bash call (default: sandbox/limits.ts DEFAULT_LIMITS). */
  sandboxLimits?: SandboxLimits;
  /** The model response store: a tool call of turn N shows the workflow recorded that turn's reply, so its entries go. */
  responses?: ResponseStore;
  /** FORKFLOW_USER_MEMORY_ROOT: one home per tenant, where `memory: user` agents keep their memory (user-memory.ts); absent: none. */
  userMemoryRoot?: string;
  /** What this worker's operator allows (consent.ts): Bash outside the sandbox for `bypassPermissions` only when it says so. */
  consent?: Pick<OperatorConsent, 'allowBypassPermissions'>;
}

/** The worker's workspace rules, from its dependencies. */
export function workspacePolicyOf(deps: Pick<ToolDeps, 'workspaceRoot' | 'workspaceRoots' | 'protectedPaths' | 'userMemoryRoot'>): WorkspacePolicy {
  return {
    defaultRoot: deps.workspaceRoot,
    roots: deps.workspaceRoots && deps.workspaceRoots.length > 0 ? deps.workspaceRoots : [deps.workspaceRoot],
    protectedPaths: deps.protectedPaths ?? protectedPaths(),
    ...(deps.userMemoryRoot !== undefined ? { userMemoryRoot: deps.userMemoryRoot } : {}),
  };
}

async function toolInput(deps: ToolDeps, input: ToolCallInput): Promise<unknown> {
  if (!input.inputAt) return input.input;
  const messages = await deps.conversations.messages(input.run, input.inputAt.messageIndex + 1);
  const message = messages[input.inputAt.messageIndex];
  const use = message ? toolUsesOf(message).find((u) => u.id === input.toolUseId) : undefined;
  if (!use) throw new Error(`tool_use ${input.toolUseId} not found at message ${input.inputAt.messageIndex}`);
  return use.input;
}

/** Attempts that throw a real (non-timeout) failure before the call is given up, as before. */
export const TOOL_FAILURE_ATTEMPTS = 3;

/**
 * Whether running a call a second time, after an attempt that may have run partly, is the
 * same as running it once. Read-only calls are; a whole-file write ends in the same file;
 * an edit (its second run finds the text already replaced) and a shell in the workspace
 * (anything at all) are not. Read-only shells are: two walls stop them writing.
 */
export function rerunnable(name: string, writePolicy: WritePolicy): boolean {
  if (name === 'FileEdit') return false;
  if (name === 'Bash') return writePolicy.kind !== 'workspace';
  return true;
}

/** What an attempt says in its heartbeats, for the next attempt to read. */
interface AttemptBeat {
  tool: string;
  /** When this attempt began running the tool itself (after fetching its input). */
  runningSince?: number;
  at: number;
}

function priorBeat(details: unknown): AttemptBeat | undefined {
  if (details === null || typeof details !== 'object') return undefined;
  const d = details as Partial<AttemptBeat>;
  return typeof d.runningSince === 'number' && typeof d.at === 'number' ? (d as AttemptBeat) : undefined;
}

export function interruptedResult(name: string, beat: AttemptBeat): ToolCallResult {
  const seconds = Math.max(0, Math.round((beat.at - beat.runningSince!) / 100) / 10);
  return {
    isError: true,
    content: `${name} was interrupted by a worker restart after ${seconds} s; it may have partly run. It was not run again: check its effect before you run it again.`,
  };
}

/**
 * Logs the requests the sandbox's proxy refused, with the call they belong to. The logger is
 * taken now, in the activity: the proxy reports from its own callbacks, where no activity
 * context need be current (`Context.current()` there threw, and ended the worker).
 */
function refusalLogger(input: ToolCallInput): (refusal: Refusal) => void {
  const log = Context.current().log;
  return (refusal) => {
    log.warn('sandbox proxy refused a request', { agentId: input.agentId, turn: input.turn, ...refusal });
  };
}

/**
 * What a call may touch, as this worker's rules resolve it: its workspace and view, its write
 * policy, and for Bash the OS sandbox (unless opted out). Shared by foreground tool calls and
 * background shell tasks (shell-tasks/), so both run under the same walls.
 */
export async function toolContextOf(
  deps: Pick<ToolDeps, 'sandbox' | 'sandboxLimits' | 'consent'>,
  policy: WorkspacePolicy,
  input: ToolCallInput,
  activity: { signal: AbortSignal; heartbeat: (details?: unknown) => void },
): Promise<{ ok: true; ctx: ToolContext } | { ok: false; message: string }> {
  let writePolicy: WritePolicy = input.writePolicy;
  // A memory: user agent's memory, in its tenant's home: the one directory outside its workspace its file tools reach.
  let userDir: string | undefined;
  if (input.userMemory) {
    try {
      userDir = await userMemoryDir(policy.userMemoryRoot, input.userMemory, await canonicalRoots(policy.roots));
    } catch (err) {
      if (!(err instanceof AgentMemoryError)) throw err;
      return { ok: false, message: `The agent's user memory cannot be reached: ${err.message}` };
    }
    if (writePolicy.kind === 'workspace') writePolicy = { kind: 'workspace', memory: { dir: userDir, canonicalDir: userDir } };
  }
  const workspace = await resolveWorkspace(
    {
      root: input.workspaceRoot,
      readPaths: input.sandbox?.readPaths,
      confinedTo: input.confinedTo,
      worktreeRepo: input.worktreeRepo,
      // A memory agent reads its memory directory too, wherever it lies (Bash: read-only).
      ...(writePolicy.kind === 'within' ? { memoryDir: writePolicy.canonicalDir ?? writePolicy.dir } : userDir ? { memoryDir: userDir } : {}),
    },
    policy,
  );
  if (!workspace.ok) return { ok: false, message: workspace.message };
  const availability = input.name === 'Bash' ? await (deps.sandbox ?? sandboxAvailability)() : undefined;
  if (availability && input.unsandboxed) {
    // The start input asked for bypassPermissions; whether Bash leaves the sandbox is the worker's operator's call.
    if (deps.consent?.allowBypassPermissions !== true) {
      Context.current().log.warn('refused Bash outside the OS sandbox: bypassPermissions is not allowed on this worker', { agentId: input.agentId, turn: input.turn });
      return { ok: false, message: bypassRefusal() };
    }
    Context.current().log.warn('Bash runs outside the OS sandbox: the fork is in bypassPermissions mode, allowed by its caller and this worker', { agentId: input.agentId, turn: input.turn });
  }
  const ctx: ToolContext = {
    root: workspace.root,
    view: workspace.view,
    signal: activity.signal,
    // Local activities (the short read tools) cannot heartbeat; their caller's task does.
    heartbeat: activity.heartbeat,
    writePolicy,
    // The parser-based classifier: advice inside the sandbox, the rule outside it.
    // awk and tee withheld unless the fork's operator allowed them back (seed 000).
    classifyShell: (command) => classifyShellCommand(command, { withhold: SHELL_OPT_IN_PROGRAMS.filter((p) => !input.shellPrograms?.includes(p)) }),
    // Every Bash call in the OS sandbox, unless opted out (tools/sandbox/policy.ts).
    ...(availability
      ? {
          shellSandbox: {
            availability,
            require: input.requireSandbox === true,
            bypass: input.unsandboxed === true,
            writableExtra: workspace.writableExtra,
            readOnlyExtra: workspace.readOnlyExtra,
            // The hosts the fork allows, through a proxy per call; each refusal is logged.
            ...(input.sandbox?.network ? { network: input.sandbox.network, onNetworkRefused: refusalLogger(input) } : {}),
            ...(deps.sandboxLimits ? { limits: deps.sandboxLimits } : {}),
          },
        }
      : {}),
  };
  return { ok: true, ctx };
}

/**
 * A call stopped by its guard (call-guard.ts): said to the model, not retried. The same
 * command would raise the same error on the next worker.
 */
function machineryFailure(name: string, err: CallMachineryError): ToolCallResult {
  return { isError: true, content: `${name} was stopped: the worker hit an internal error while serving it (${err.message}); what it started was killed. It was not run again.` };
}

export function createToolActivities(deps: ToolDeps) {
  const policy = workspacePolicyOf(deps);
  return {
    async runTool(input: ToolCallInput): Promise<ToolCallResult> {
      const ctx = Context.current();
      const writePolicy: WritePolicy = input.writePolicy;
      const once = !rerunnable(input.name, writePolicy);
      if (once && ctx.info.attempt > 1) {
        const prior = priorBeat(ctx.info.heartbeatDetails);
        if (prior) return interruptedResult(input.name, prior);
      }
      // The reply that asked for this call is in history: its kept response is no longer needed.
      void deps.responses?.settle({ namespace: ctx.info.namespace, ...input.run, turn: input.turn + 1 }).catch(() => undefined);
      const beat: AttemptBeat = { tool: input.name, at: Date.now() };
      // Beating starts before the first I/O: a large input is fetched from the conversation first.
      const stopHeartbeat = startHeartbeat(() => ({ ...beat, at: Date.now() }));
      try {
        const raw = await toolInput(deps, input);
        beat.runningSince = Date.now();
        // A call that must not run twice says at once that it began: the first heartbeat is not throttled.
        if (once && !ctx.info.isLocal) ctx.heartbeat({ ...beat });
        const built = await toolContextOf(deps, policy, input, { signal: ctx.cancellationSignal, heartbeat: ctx.info.isLocal ? () => undefined : (details?: unknown) => ctx.heartbeat(details) });
        if (!built.ok) return { isError: true, content: built.message };
        // The call's machinery (proxy, pipes, timers) cannot end this worker: an error it throws stops this call only.
        return await guardCall(ctx.cancellationSignal, (signal) => runBuiltinTool(input.name, raw, { ...built.ctx, signal }));
      } catch (err) {
        if (err instanceof CallMachineryError) return machineryFailure(input.name, err);
        // Cancelled by the workflow, or by this worker shutting down: then the attempt fails
        // and another worker retries it at once (the rules above decide what that retry does).
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure(`${input.name} cancelled`);
        if (ctx.info.attempt >= TOOL_FAILURE_ATTEMPTS) {
          const message = err instanceof Error ? err.message : String(err);
          throw ApplicationFailure.create({ type: 'ToolActivityError', message, nonRetryable: true, cause: err instanceof Error ? err : undefined });
        }
        throw err;
      } finally {
        stopHeartbeat();
      }
    },
  };
}
