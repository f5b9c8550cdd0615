/**
 * Cache-break detection on a fork's first turn: the provider reported writing cache
 * (creation > 0) while reading less than half of the input from it, so the fork did not
 * share its parent's cached prefix. Say why, from the parent's and the fork's hashes.
 */
import { log } from '@temporalio/workflow';
import { cacheHitRatio, type Usage } from '../../shared/anthropic';
import { diagnoseCacheBreak, UNKNOWN_CACHE_BREAK } from '../../shared/snapshot';
import type { ForkAgent } from './agent';
import { cacheBroke } from '../metrics';

export const CACHE_BREAK_RATIO = 0.5;

export function checkFirstTurnCache(agent: ForkAgent, usage: Usage): void {
  if (agent.turns !== 1 || !agent.usedParentSnapshot) return;
  const ratio = cacheHitRatio(usage);
  if (usage.cacheCreationInputTokens === 0 || ratio >= CACHE_BREAK_RATIO) return;
  const { parentHashes, forkHashes } = agent.setup;
  const reason = parentHashes && forkHashes ? diagnoseCacheBreak(parentHashes, forkHashes) : UNKNOWN_CACHE_BREAK;
  agent.cacheBreak = { ratio, reason };
  cacheBroke(reason);
  log.warn('fork.cache_break_detected', {
    event: 'fork.cache_break_detected',
    agentId: agent.agentId,
    forkLabel: agent.input.forkLabel,
    ratio,
    reason,
    cacheReadInputTokens: usage.cacheReadInputTokens,
    cacheCreationInputTokens: usage.cacheCreationInputTokens,
    inputTokens: usage.inputTokens,
  });
}
