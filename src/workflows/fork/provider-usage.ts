/**
 * An agent's usage per provider, for its status (issue 43): each model call, keep-alive and
 * compaction is counted on the provider that served it (a fallback's after a failover), so
 * `status.providers` shows every provider's tokens and its cache-read share (cache reads over
 * all its input: `cached_tokens` on an OpenAI-compatible provider). Kept in the agent's tally
 * and carried across its runs. Counting is behind a patch: a run recorded before it replays
 * without it (its status then lists no providers).
 */
import { patched } from '@temporalio/workflow';
import { cacheHitRatio, type Usage } from '../../shared/messages-api/anthropic';
import { agentProvider } from '../../shared/providers/agent-provider';
import { DEFAULT_PROVIDER } from '../../shared/providers/model-allowlist';
import type { ProviderUsage } from '../../shared/wire/status';
import type { ForkAgent } from './agent';

/** Marks runs that count usage per provider. */
export const PROVIDER_USAGE_PATCH = 'forkflow-provider-usage-1';

/** The provider a call with this input went to: its own, else the agent's, else the tree's default. */
export function providerOfCall(agent: ForkAgent, input: { provider?: string }): string {
  return input.provider ?? agentProvider(agent.input, { provider: agent.input.subAgents?.provider ?? DEFAULT_PROVIDER });
}

/** Counts `usage` on the provider the call went to. */
export function countOnProvider(agent: ForkAgent, input: { provider?: string }, usage: Usage): void {
  if (!patched(PROVIDER_USAGE_PATCH)) return;
  agent.tally.recordOnProvider(providerOfCall(agent, input), usage);
}

/** What `status.providers` shows: each provider's calls, usage and cache-read share, most input first. */
export function providerUsageStatus(byProvider: Readonly<Record<string, { calls: number; usage: Usage }>> | undefined): ProviderUsage[] | undefined {
  if (!byProvider) return undefined;
  const rows = Object.entries(byProvider).map(([provider, p]) => ({ provider, calls: p.calls, usage: p.usage, cacheReadShare: Math.round(cacheHitRatio(p.usage) * 10_000) / 10_000 }));
  const input = (r: ProviderUsage) => r.usage.inputTokens + r.usage.cacheReadInputTokens + r.usage.cacheCreationInputTokens;
  return rows.sort((a, b) => input(b) - input(a) || (a.provider < b.provider ? -1 : 1));
}
