/**
 * Keeping an agent inside its model's context window (policy: src/shared/context/policy.ts),
 * the workflow's part:
 *
 * - before a model call whose request would pass the threshold, forkflow compacts (its own
 *   compaction activity, a durable step billed and charged like any call: the summary of
 *   messages `[from, keepFrom)`, then the most recent turns kept verbatim) or, under its own
 *   tool-result clearing, moves the clearing point (no command: the cut is state);
 * - a call refused as too long (the provider's `prompt is too long`, or the activity's own
 *   pre-flight) is answered by a forkflow compaction, and the turn loop calls once more;
 * - a reply that carries the provider's compaction block moves the boundary to that reply.
 *
 * The conversation stays whole and append-only: a compaction appends the summary message
 * (and copies of the kept turns) and moves where requests start. The transcript keeps it all.
 */
import { ActivityFailure, ApplicationFailure, deprecatePatch, isCancellation, log } from '@temporalio/workflow';
import { ZERO_USAGE, type Usage } from '../../shared/messages-api/anthropic';
import type { ModelCallResult } from '../../shared/wire/activity-io';
import { CONTEXT_FAILURE } from '../../shared/context/call';
import { compactsOnTooLong } from '../../shared/context/policy';
import type { CompactionReason } from '../../shared/context/state';
import { hasCompactionBlock, summaryMaxTokens, summaryMessage } from '../../shared/context/summary';
import { clearingPoint, recentTurnsStart } from '../../shared/context/view';
import { compactor, modelQueueOf } from '../activities';
import { compacted as countCompaction, compactionTokens } from '../metrics';
import type { ForkAgent } from './agent';
import { modelCallInput } from './call-input';
import { mediaRulesFor } from './media-rules';
import { askShare, shareShortOf, spending } from './tree-shares';
import { publishProgress } from './visibility';
import { countOnProvider } from './provider-usage';

/**
 * Runs recorded before context management never compacted; the marker is recorded where a
 * compaction activity is first scheduled, so their histories replay without one.
 */
export const CONTEXT_COMPACTION_PATCH = 'forkflow-context-compaction';

type Refusal = Extract<CompactionReason, 'prompt-too-long' | 'over-threshold'>;

/** A model call refused because its request does not fit: too long for the window, or over the threshold. */
export function contextRefusal(err: unknown): Refusal | undefined {
  if (!(err instanceof ActivityFailure) || !(err.cause instanceof ApplicationFailure)) return undefined;
  if (err.cause.type === CONTEXT_FAILURE.promptTooLong) return 'prompt-too-long';
  if (err.cause.type === CONTEXT_FAILURE.overThreshold) return 'over-threshold';
  return undefined;
}

/** The request's size a refusal reported (the provider's count, or the pre-flight's). */
function refusedTokens(err: unknown): number | undefined {
  const details = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? (err.cause.details?.[0] as { tokens?: unknown } | undefined) : undefined;
  return typeof details?.tokens === 'number' ? details.tokens : undefined;
}

/** Before the model call of `turn`: forkflow's own management, when the request would pass the threshold. */
export async function manageContext(agent: ForkAgent, turn: number): Promise<void> {
  const tokens = agent.window.overThreshold(agent.messages, agent.base);
  if (tokens === undefined) return;
  if (agent.window.policy.strategy === 'clear-tool-results') {
    const point = clearingPoint(agent.messages, agent.base, agent.window.policy.keepToolUses);
    if (point !== undefined && agent.window.clearThrough(point)) log.info('tool results cleared', { agentId: agent.agentId, turn, before: point });
    return;
  }
  if (agent.window.policy.strategy === 'compact') await compact(agent, turn, 'threshold', tokens);
}

/** A refused call: compact (every policy but `off`) so the turn loop can call once more. False: nothing done, the refusal stands. */
export async function compactAfterRefusal(agent: ForkAgent, turn: number, refusal: { reason: Refusal; err: unknown }): Promise<boolean> {
  if (!compactsOnTooLong(agent.window.policy)) return false;
  return compact(agent, turn, refusal.reason, refusedTokens(refusal.err));
}

/** Usage as the stream carries it (the four counts). */
function streamUsage(u: Usage): { inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number } {
  return { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cacheReadInputTokens: u.cacheReadInputTokens, cacheCreationInputTokens: u.cacheCreationInputTokens };
}

/**
 * A forkflow compaction before the model call of `turn`. False when none was made (a history
 * recorded before compaction existed, or the summary call failed: the caller goes on as it
 * would have without one).
 */
async function compact(agent: ForkAgent, turn: number, reason: CompactionReason, tokensBefore?: number): Promise<boolean> {
  // Retirement step 2 (docs/guides/patches.md): no recorded history takes the old branch.
  deprecatePatch(CONTEXT_COMPACTION_PATCH);
  const keeper = agent.window;
  const end = agent.messageCount;
  const keepBudget = Math.floor(keeper.windowTokens * keeper.policy.keepRecent);
  const keepFrom = recentTurnsStart(agent.messages, agent.base, keeper.from, keepBudget, mediaRulesFor(agent.messages));
  const n = keeper.compactions + 1;
  agent.doing(`compacting the context before turn ${turn}`);
  publishProgress(agent);
  let result;
  // In a tree that lends budget shares the summary call charges the agent's share; one that does not fit asks for more, once.
  const summarise = () => {
    const call = modelCallInput(agent, turn, { compactAbove: false });
    return spending(
      agent,
      call,
      () =>
        compactor.compactContext.executeWithOptions(
          { summary: `compaction ${n} · before turn ${turn} · model ${agent.summary.model}`, priority: { fairnessKey: agent.rootAgentId }, ...modelQueueOf(agent.input) },
          [{ call, keepFrom, compaction: n, maxTokens: summaryMaxTokens(keeper.windowTokens), ...(keeper.policy.instructions ? { instructions: keeper.policy.instructions } : {}) }],
        ),
      (r) => ({ ...(call.provider ? { provider: call.provider } : {}), model: r.model, usage: r.usage, kind: 'compaction' }),
    );
  };
  try {
    try {
      result = await summarise();
    } catch (err) {
      const short = shareShortOf(err);
      if (!short || (await askShare(agent, short.need, short.want)) !== undefined) throw err;
      result = await summarise();
    }
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('compaction failed; going on without it', { agentId: agent.agentId, turn, reason, error: err instanceof Error ? err.message : String(err) });
    agent.doing(undefined);
    return false;
  }
  const at = agent.messageCount;
  const before = tokensBefore ?? keeper.expected(agent.messages, agent.base) ?? result.requestTokens;
  const kept = agent.messages.slice(keepFrom - agent.base, end - agent.base);
  agent.append(summaryMessage(result.summary, { compaction: n, turn, from: keeper.from, to: keepFrom }));
  for (const m of kept) agent.append(m);
  keeper.compacted({ at, turn, by: 'forkflow', reason, tokensBefore: before }, result.usage);
  agent.tally.recordCompaction(result.usage);
  countOnProvider(agent, agent.input, result.usage);
  agent.cache.compacted();
  agent.live.compaction(turn, { by: 'forkflow', reason, at, compaction: n, tokensBefore: before, usage: streamUsage(result.usage) });
  countCompaction('forkflow', reason, result.usage);
  agent.doing(undefined);
  publishProgress(agent);
  return true;
}

/**
 * After the model call of `turn` (covering `messageCount` messages; its reply goes to message
 * `at`): the request's size becomes the base of the next estimate, what compactions saved is
 * counted, and a reply that carries the provider's compaction block moves the boundary to it.
 */
export function contextAfterCall(agent: ForkAgent, turn: number, at: number, messageCount: number, result: ModelCallResult): void {
  agent.window.called(messageCount, result);
  compactionTokens('saved', agent.window.dropped);
  if (result.compaction || hasCompactionBlock(result.message)) recordProviderCompaction(agent, turn, at, result);
}

function recordProviderCompaction(agent: ForkAgent, turn: number, at: number, result: ModelCallResult): void {
  const spent = result.compaction?.usage ?? ZERO_USAGE;
  const keeper = agent.window;
  const after = agent.window.status(agent.model).lastRequestTokens;
  const before = result.compaction?.tokensBefore ?? result.requestTokens ?? 0;
  keeper.compacted({ at, turn, by: 'provider', reason: 'provider', tokensBefore: before, ...(after !== undefined ? { tokensAfter: after } : {}) }, spent);
  agent.cache.compacted();
  agent.live.compaction(turn, { by: 'provider', reason: 'provider', at, compaction: keeper.compactions, tokensBefore: before, ...(after !== undefined ? { tokensAfter: after } : {}), usage: streamUsage(spent) });
  countCompaction('provider', 'provider', spent);
  publishProgress(agent);
}
