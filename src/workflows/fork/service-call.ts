/**
 * A routed tool call (src/shared/tools/routes.ts): one `forkflow.callTool` activity on the
 * service's queue per attempt, its answer checked against the contract. The workflow, not
 * Temporal's retry policy, decides about another attempt, because only it knows what the
 * tool is:
 * - nobody takes the call within `scheduleToStart`: an error result naming the queue (never
 *   started, so never retried: a queue nobody serves stays unserved);
 * - an attempt lost (its worker died, or it ran past `timeout` / `heartbeat`): an idempotent
 *   tool runs again (up to its attempts), any other gets "interrupted, it may have partly
 *   run", once, and is not run again — the service's heartbeats are not relied on for this;
 * - the tool throws: an error result with its message (an idempotent tool whose failure is
 *   retryable is tried again first);
 * - an answer that is not a tool result, or is larger than the route allows: an error result
 *   saying so.
 */
import { isCancellation, sleep } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages-api/anthropic';
import { utf8Length } from '../../shared/base/hash';
import { plainIssues } from '../../shared/base/plain-issues';
import { attemptPolicy, type Route } from '../../shared/tools/routes';
import { SERVICE_CONTRACT_VERSION, SERVICE_TOOL_ACTIVITY, serviceToolResultSchema, type ServiceToolCall, type ServiceToolResult } from '../../shared/tools/service-contract';
import { service } from '../activities';
import type { ForkAgent } from './agent';
import { callFailure, seconds } from './call-failures';
import { errorResult } from './tool-results';
import { imageIssue } from '../../shared/messages-api/media-limits';

export type ToolOutcome = { block: ToolResultBlock; outcome: 'ok' | 'error' };

/** UTF-8 bytes of a result's content (an image counts its base64 data). */
export function contentBytes(content: ServiceToolResult['content']): number {
  if (typeof content === 'string') return utf8Length(content);
  return content.reduce((n, b) => n + (b.type === 'text' ? utf8Length(b.text) : b.source.data.length), 0);
}

/** A checked result as the model's tool_result (only the fields the Messages API takes). */
export function resultBlock(toolUseId: string, content: ServiceToolResult['content'], isError: boolean): ToolOutcome {
  // Text alone reads the same as one string (and keeps transcripts plain).
  const textOnly = typeof content !== 'string' && content.every((b) => b.type === 'text');
  const blocks = typeof content === 'string' ? content : textOnly ? content.map((b) => (b as { text: string }).text).join('\n') : content.map((b) => (b.type === 'text' ? { type: 'text' as const, text: b.text } : { type: 'image' as const, source: { type: 'base64' as const, media_type: b.source.media_type, data: b.source.data } }));
  return { block: { type: 'tool_result', tool_use_id: toolUseId, content: blocks, ...(isError ? { is_error: true } : {}) }, outcome: isError ? 'error' : 'ok' };
}

const failed = (use: ToolUseBlock, message: string): ToolOutcome => ({ block: errorResult(use.id, message), outcome: 'error' });

/** The service's answer, checked: a tool result within the route's size, or an error saying what is wrong. */
function checked(use: ToolUseBlock, route: Route, raw: unknown): ToolOutcome {
  const parsed = serviceToolResultSchema.safeParse(raw);
  if (!parsed.success) {
    return failed(use, `${use.name} answered with something that is not a tool result (${plainIssues(parsed.error, 'result').join('; ')}); its service on task queue "${route.taskQueue}" must return {"content": string or blocks, "is_error"?: boolean}.`);
  }
  const bytes = contentBytes(parsed.data.content);
  if (bytes > route.maxResultBytes) {
    return failed(use, `${use.name} returned ${bytes} bytes, more than the ${route.maxResultBytes} a result of it may have: ask for less (a narrower query, a smaller page).`);
  }
  return resultBlock(use.id, refusedImages(parsed.data.content), parsed.data.is_error === true);
}

/**
 * A result's images the API would refuse (src/shared/messages-api/media-limits.ts) as a line naming why:
 * sent on, one would fail this turn's request and every later one. The patch is asked only
 * when there is such an image, so other runs' histories carry no marker.
 */
function refusedImages(content: ServiceToolResult['content']): ServiceToolResult['content'] {
  if (typeof content === 'string') return content;
  const issues = content.map((b) => (b.type === 'image' ? imageIssue(b) : undefined));
  if (!issues.some(Boolean)) return content;
  return content.map((b, i) => (issues[i] ? { type: 'text' as const, text: `[an image (${(b as { source: { media_type: string } }).source.media_type}) refused: ${issues[i]}]` } : b));
}

/** Runs `use` (with `input`, after any PreToolUse rewrite) on the service that `route` names. */
export async function runServiceTool(agent: ForkAgent, use: ToolUseBlock, input: Record<string, unknown>, route: Route): Promise<ToolOutcome> {
  const policy = attemptPolicy(route);
  const idempotent = route.idempotent ?? route.readOnly;
  for (let attempt = 1; ; attempt++) {
    const call: ServiceToolCall = { v: SERVICE_CONTRACT_VERSION, tool: use.name, input, tool_use_id: use.id, agent_id: agent.agentId, root_id: agent.rootAgentId, turn: agent.turns, attempt };
    agent.doing(`tool ${use.name} on ${route.taskQueue}${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
    try {
      const raw = await service[SERVICE_TOOL_ACTIVITY].executeWithOptions(
        {
          taskQueue: route.taskQueue,
          scheduleToStartTimeout: policy.scheduleToStartMs,
          startToCloseTimeout: policy.timeoutMs,
          ...(policy.heartbeatMs !== undefined ? { heartbeatTimeout: policy.heartbeatMs } : {}),
          summary: `turn ${agent.turns} · ${use.name} · on ${route.taskQueue}${attempt > 1 ? ` · attempt ${attempt}` : ''}`,
        },
        [call],
      );
      return checked(use, route, raw);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const why = callFailure(err);
      if (why.kind === 'unserved') {
        return failed(use, `${use.name} was not run: no worker took it from task queue "${route.taskQueue}" within ${seconds(policy.scheduleToStartMs)} (is the service that serves it running?).`);
      }
      const more = attempt < policy.maximumAttempts;
      if (why.kind === 'lost') {
        const how = why.how === 'heartbeat' ? `its worker stopped heartbeating (no beat within ${seconds(policy.heartbeatMs ?? 0)})` : `no answer within its ${seconds(policy.timeoutMs)} limit (its worker may have been lost)`;
        if (!idempotent) {
          return failed(use, `${use.name} was interrupted: ${how}; it may have partly run. It was not run again: check its effect before you run it again.`);
        }
        if (more) {
          await sleep(policy.initialIntervalMs * 2 ** (attempt - 1));
          continue;
        }
        return failed(use, `${use.name} failed: ${how}, ${attempt} time(s).`);
      }
      if (why.kind === 'threw' && why.retryable && idempotent && more) {
        await sleep(policy.initialIntervalMs * 2 ** (attempt - 1));
        continue;
      }
      return failed(use, `${use.name} failed in its service (task queue "${route.taskQueue}"): ${why.message}`);
    }
  }
}
