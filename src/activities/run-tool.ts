/**
 * The tool activity: runs one built-in tool call in this worker's workspace. Large tool
 * inputs are read from the conversation instead of travelling in the activity input.
 * A tool's own failures come back as data (`isError`); cancellation propagates.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
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

export function createToolActivities(deps: ToolDeps) {
  return {
    async runTool(input: ToolCallInput): Promise<ToolCallResult> {
      const ctx = Context.current();
      // Beating starts before the first I/O: a large input is fetched from the conversation first.
      const stopHeartbeat = startHeartbeat(() => ({ tool: input.name }));
      try {
        const raw = await toolInput(deps, input);
        const root = input.workspaceRoot ?? deps.workspaceRoot;
        const writePolicy: WritePolicy = input.writePolicy;
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
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure(`${input.name} cancelled`);
        throw err;
      } finally {
        stopHeartbeat();
      }
    },
  };
}
