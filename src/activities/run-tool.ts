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
import { toolUsesOf } from '../shared/anthropic';
import type { ToolCallInput, ToolCallResult } from '../shared/activity-io';
import type { ConversationSource } from './conversation';
import { startHeartbeat } from './heartbeat';
import { runBuiltinTool } from './tools';
import { sandboxAvailability, type SandboxAvailability } from './tools/sandbox';
import { classifyShellCommand } from './tools/shell';
import type { WritePolicy } from './tools/types';

export interface ToolDeps {
  conversations: ConversationSource;
  /** Default workspace root of this worker. */
  workspaceRoot: string;
  /** What OS sandbox this worker has for Bash (default: probed once per process). */
  sandbox?: () => Promise<SandboxAvailability>;
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

export function createToolActivities(deps: ToolDeps) {
  return {
    async runTool(input: ToolCallInput): Promise<ToolCallResult> {
      const ctx = Context.current();
      const writePolicy: WritePolicy = input.writePolicy;
      const once = !rerunnable(input.name, writePolicy);
      if (once && ctx.info.attempt > 1) {
        const prior = priorBeat(ctx.info.heartbeatDetails);
        if (prior) return interruptedResult(input.name, prior);
      }
      const beat: AttemptBeat = { tool: input.name, at: Date.now() };
      // Beating starts before the first I/O: a large input is fetched from the conversation first.
      const stopHeartbeat = startHeartbeat(() => ({ ...beat, at: Date.now() }));
      try {
        const raw = await toolInput(deps, input);
        beat.runningSince = Date.now();
        // A call that must not run twice says at once that it began: the first heartbeat is not throttled.
        if (once && !ctx.info.isLocal) ctx.heartbeat({ ...beat });
        const root = input.workspaceRoot ?? deps.workspaceRoot;
        const availability = input.name === 'Bash' ? await (deps.sandbox ?? sandboxAvailability)() : undefined;
        return await runBuiltinTool(input.name, raw, {
          root,
          signal: ctx.cancellationSignal,
          // Local activities (the short read tools) cannot heartbeat; their caller's task does.
          heartbeat: ctx.info.isLocal ? () => undefined : (details?: unknown) => ctx.heartbeat(details),
          writePolicy,
          // Outside the workspace policy, Bash runs only when the parser-based classifier says it reads.
          classifyShell: classifyShellCommand,
          // ... and inside the OS sandbox when this worker has one (tools/sandbox/policy.ts).
          ...(availability ? { shellSandbox: { availability, require: input.requireSandbox === true, workspace: input.sandbox?.network === false } } : {}),
        });
      } catch (err) {
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
