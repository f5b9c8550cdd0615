/**
 * A service's hooks (src/shared/tools/hooks.ts), decided here and carried out as
 * `forkflow.hook` activities on the service's queue — durable (recorded in history), each
 * with its timeout, one attempt:
 * - PreToolUse, before a built-in, routed or MCP tool runs (after the permission model
 *   allowed it, before any approval): allow, deny with a message the model reads, or rewrite
 *   the input. A hook that fails or does not answer denies the call (fail closed) unless it
 *   is configured `onError: "allow"`.
 * - PostToolUse, after such a tool ran: `additional_context` joins the result the model reads.
 * - SubagentStart, before the agent's first turn: `additional_context` joins its opening.
 * - Stop, when the agent's model has finished its answer: `decision: "block"` sends it back to
 *   work with `message` (at most STOP_BLOCKS times in a row).
 * - SubagentStop, when the agent has ended: told its status and last text.
 * A failed hook other than PreToolUse changes nothing; it is reported in the agent's status.
 * Sub-agent tools (Agent, SendMessage…) are not hooked.
 */
import { isCancellation } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import { toMs } from '../../shared/base/duration';
import { INPUT_LIMITS, jsonLimitIssue } from '../../shared/wire/limits';
import { plainIssues } from '../../shared/base/plain-issues';
import { HOOK_DEFAULTS, hooksFor, type HookEntry } from '../../shared/tools/hooks';
import { SERVICE_CONTRACT_VERSION, SERVICE_HOOK_ACTIVITY, serviceHookAnswerSchema, type HookEvent, type ServiceHookAnswer, type ServiceHookCall } from '../../shared/tools/service-contract';
import { service } from '../activities';
import type { ForkAgent } from './agent';
import { callFailure, seconds } from './call-failures';

type HookReply = { ok: true; answer: ServiceHookAnswer } | { ok: false; error: string };

/** One hook call; every failure comes back as a reason (never thrown, cancellation aside). */
type HookFields = { event: HookEvent; tool?: string; input?: Record<string, unknown>; tool_use_id?: string; result?: { content: string | unknown[]; is_error: boolean }; prompt?: string; status?: string; text?: string };

async function callHook(agent: ForkAgent, hook: HookEntry, call: HookFields): Promise<HookReply> {
  const scheduleToStartMs = toMs(hook.scheduleToStart ?? HOOK_DEFAULTS.scheduleToStart);
  const timeoutMs = toMs(hook.timeout ?? HOOK_DEFAULTS.timeout);
  const input: ServiceHookCall = {
    v: SERVICE_CONTRACT_VERSION,
    agent_id: agent.agentId,
    root_id: agent.rootAgentId,
    turn: agent.turns,
    ...(agent.input.parentAgentId ? { parent_agent_id: agent.input.parentAgentId } : {}),
    ...call,
  };
  try {
    const raw = await service[SERVICE_HOOK_ACTIVITY].executeWithOptions(
      { taskQueue: hook.taskQueue, scheduleToStartTimeout: scheduleToStartMs, startToCloseTimeout: timeoutMs, summary: `${call.event} hook${call.tool ? ` · ${call.tool}` : ''} · on ${hook.taskQueue}` },
      [input],
    );
    // A rewritten input nested past the limits would overflow the model call's hashing.
    const tooBig = jsonLimitIssue(raw, INPUT_LIMITS, 'its answer');
    if (tooBig) return { ok: false, error: tooBig };
    const parsed = serviceHookAnswerSchema.safeParse(raw ?? {});
    if (!parsed.success) return { ok: false, error: `its answer is not a hook answer (${plainIssues(parsed.error, 'answer').join('; ')})` };
    return { ok: true, answer: parsed.data };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const why = callFailure(err);
    if (why.kind === 'unserved') return { ok: false, error: `no worker took it from task queue "${hook.taskQueue}" within ${seconds(scheduleToStartMs)}` };
    if (why.kind === 'lost') return { ok: false, error: `no answer within ${seconds(timeoutMs)}` };
    return { ok: false, error: why.message };
  }
}

function hookName(event: HookEvent, hook: HookEntry): string {
  return `the ${event} hook on task queue "${hook.taskQueue}"`;
}

/** PreToolUse: `{ input }` to run the call with (maybe rewritten), or `{ deny }` with the model's message. */
export async function preToolUse(agent: ForkAgent, use: ToolUseBlock, input: Record<string, unknown>): Promise<{ input: Record<string, unknown> } | { deny: string }> {
  let current = input;
  for (const hook of hooksFor(agent.input.hooks, 'PreToolUse', use.name)) {
    const reply = await callHook(agent, hook, { event: 'PreToolUse', tool: use.name, input: current, tool_use_id: use.id });
    if (!reply.ok) {
      if (hook.onError === 'allow') {
        agent.notice(`${hookName('PreToolUse', hook)} failed (${reply.error}); ${use.name} ran anyway (onError: allow).`);
        continue;
      }
      return { deny: `${use.name} was not run: ${hookName('PreToolUse', hook)}, which must approve it, failed (${reply.error}).` };
    }
    const a = reply.answer;
    if (a.decision === 'deny' || a.decision === 'block') return { deny: a.message ? `${use.name} was denied by policy: ${a.message}` : `${use.name} was denied by policy.` };
    if (a.input) current = a.input;
  }
  return { input: current };
}

function withContext(block: ToolResultBlock, context: string): ToolResultBlock {
  const extra = { type: 'text' as const, text: `<hook-context>\n${context}\n</hook-context>` };
  const content = block.content === undefined ? [] : typeof block.content === 'string' ? [{ type: 'text' as const, text: block.content }] : block.content;
  return { ...block, content: [...content, extra] };
}

/** PostToolUse: the result with any context the hooks add. */
export async function postToolUse(agent: ForkAgent, use: ToolUseBlock, input: Record<string, unknown>, block: ToolResultBlock): Promise<ToolResultBlock> {
  let out = block;
  for (const hook of hooksFor(agent.input.hooks, 'PostToolUse', use.name)) {
    const content = typeof out.content === 'string' || out.content === undefined ? (out.content ?? '') : out.content;
    const reply = await callHook(agent, hook, { event: 'PostToolUse', tool: use.name, input, tool_use_id: use.id, result: { content, is_error: out.is_error === true } });
    if (!reply.ok) agent.notice(`${hookName('PostToolUse', hook)} failed for ${use.name}: ${reply.error}.`);
    else if (reply.answer.additional_context) out = withContext(out, reply.answer.additional_context);
  }
  return out;
}

/** SubagentStart: context the hooks add to the agent's opening (undefined: none). */
export async function subagentStart(agent: ForkAgent): Promise<string | undefined> {
  const parts: string[] = [];
  for (const hook of hooksFor(agent.input.hooks, 'SubagentStart')) {
    const reply = await callHook(agent, hook, { event: 'SubagentStart', prompt: agent.input.prompt });
    if (!reply.ok) agent.notice(`${hookName('SubagentStart', hook)} failed: ${reply.error}.`);
    else if (reply.answer.additional_context) parts.push(reply.answer.additional_context);
  }
  return parts.length ? parts.join('\n\n') : undefined;
}

/** Stop: the message that sends the agent back to work, when a hook blocks its stop. */
export async function stopHook(agent: ForkAgent): Promise<string | undefined> {
  for (const hook of hooksFor(agent.input.hooks, 'Stop')) {
    const reply = await callHook(agent, hook, { event: 'Stop', status: 'end_turn', ...(agent.lastText ? { text: agent.lastText } : {}) });
    if (!reply.ok) agent.notice(`${hookName('Stop', hook)} failed: ${reply.error}.`);
    else if (reply.answer.decision === 'block') return reply.answer.message ?? 'A Stop hook says the task is not done yet: go on.';
  }
  return undefined;
}

/** SubagentStop: tells the hooks how the agent ended. */
export async function subagentStop(agent: ForkAgent, status: string, text: string): Promise<void> {
  for (const hook of hooksFor(agent.input.hooks, 'SubagentStop')) {
    const reply = await callHook(agent, hook, { event: 'SubagentStop', status, text });
    if (!reply.ok) agent.notice(`${hookName('SubagentStop', hook)} failed: ${reply.error}.`);
  }
}
