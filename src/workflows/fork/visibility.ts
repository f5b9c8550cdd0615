/**
 * What operators see without decoding anything: search attributes (for filtering), the
 * current details line (turn, state, tokens), kept cheap — search attributes change only on
 * state transitions, so they cost a handful of history events per fork, not one per turn.
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { totalInputTokens, totalTokens } from '../../shared/messages-api/anthropic';
import { SA } from '../../shared/wire/search-attributes';
import type { ForkState } from '../../shared/wire/status';
import type { ForkAgent } from './agent';

function compact(n: number): string {
  return n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n);
}

/** Current details (Web UI "Current details"; markdown). Not recorded in history. */
export function publishProgress(agent: ForkAgent): void {
  const u = agent.usage;
  const lines = [
    `**${agent.input.forkLabel}** · ${agent.state} · turn ${agent.turns}/${agent.input.maxTurns} · ${agent.toolUses} tool calls`,
    `tokens: in ${compact(totalInputTokens(u))} (cache read ${compact(u.cacheReadInputTokens)}, write ${compact(u.cacheCreationInputTokens)}) · out ${compact(u.outputTokens)}`,
  ];
  // Running without the OS sandbox is an opt-out operators must see.
  const shell = agent.workArea.containment;
  lines.push(`permissions: ${agent.input.permissionMode}${shell ? ` · shell: ${shell === 'sandbox' ? 'OS sandbox' : `NOT sandboxed (${shell})`}` : ''}`);
  if (agent.opened) {
    const c = agent.window.status(agent.model);
    const last = c.boundaries[c.boundaries.length - 1];
    const compactions = c.compactions > 0 ? ` · ${c.compactions} compaction${c.compactions === 1 ? '' : 's'}${last ? ` (last before turn ${last.turn}, ${last.by})` : ''} · saved ${compact(c.tokensSaved)}` : '';
    lines.push(`context: ${c.lastRequestTokens !== undefined ? compact(c.lastRequestTokens) : '?'} of ${compact(c.window)} tokens · ${c.policy}${compactions}`);
  }
  if (agent.activity) lines.push(`now: ${agent.activity}`);
  if (agent.inbox.length) lines.push(`queued messages: ${agent.inbox.length}`);
  if (agent.error) lines.push(`error: ${agent.error}`);
  setCurrentDetails(lines.join('\n\n'));
}

/** Sets identity attributes once (skipped when the starter already set them). */
export function publishIdentity(agent: ForkAgent): void {
  const current = workflowInfo().typedSearchAttributes;
  const wanted: SearchAttributeUpdatePair[] = [
    { key: SA.agentId, value: agent.agentId },
    { key: SA.rootId, value: agent.rootAgentId },
    { key: SA.label, value: agent.input.forkLabel },
    { key: SA.querySource, value: agent.input.querySource },
    { key: SA.state, value: agent.state },
  ];
  // A fork from a point names the agent it came from even when it is not that agent's child.
  const origin = agent.lineage.origin;
  const parentId = agent.input.parentAgentId ?? origin?.agentId;
  if (parentId) wanted.push({ key: SA.parentId, value: parentId });
  if (origin) wanted.push({ key: SA.parentRun, value: origin.runId }, { key: SA.parentTurn, value: origin.turn });
  if (agent.input.name) wanted.push({ key: SA.name, value: agent.input.name });
  const missing = wanted.filter((p) => current.get(p.key as typeof SA.agentId) !== p.value);
  if (missing.length > 0) upsertSearchAttributes(missing);
  publishProgress(agent);
}

export function setState(agent: ForkAgent, state: ForkState): void {
  if (agent.state === state) return;
  agent.state = state;
  const pairs: SearchAttributeUpdatePair[] = [{ key: SA.state, value: state }];
  if (state !== 'running' && state !== 'awaiting_approval') {
    pairs.push({ key: SA.turns, value: agent.turns }, { key: SA.totalTokens, value: totalTokens(agent.usage) });
  }
  upsertSearchAttributes(pairs);
  publishProgress(agent);
}
