/** A listed agent: what `forkflow list` and `client.list()` show, from visibility alone. */
import { HIDDEN_MEMO } from '../shared/wire/hidden-memo';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { SA } from '../shared/wire/search-attributes';
import type { AgentColor } from '../shared/agents/agents';
import { colorMemo, colorOfMemo } from '../shared/agents/agent-color';

export interface AgentRow {
  agentId: string;
  workflowId: string;
  runId: string;
  label?: string;
  state?: string;
  parentId?: string;
  /** A fork from a point of its parent: the parent's run that held the point, and the turn. */
  parentRun?: string;
  parentTurn?: number;
  rootId?: string;
  querySource?: string;
  /** Temporal's own execution status (RUNNING, COMPLETED, FAILED, ...). */
  temporalStatus: string;
  /** The task queue its workflow runs on (a remote sub-agent's is its tree's remote queue). */
  taskQueue?: string;
  startTime: string;
  closeTime?: string;
  turns?: number;
  totalTokens?: number;
  /** Its display colour (a definition's `color`, or ForkInput.color), from its start memo. */
  color?: AgentColor;
}

/** The memo a fork started with skipTranscript carries (src/shared/wire/hidden-memo.ts). */
export { HIDDEN_MEMO };

/** The start memo of a fork: hidden when it runs with skipTranscript, its colour when it has one, none otherwise. */
export function startMemo(v: { skipTranscript?: boolean; color?: AgentColor }): { memo?: Record<string, unknown> } {
  const memo = { ...(v.skipTranscript ? HIDDEN_MEMO : {}), ...colorMemo(v) };
  return Object.keys(memo).length > 0 ? { memo } : {};
}

/** True for a fork started hidden (see {@link HIDDEN_MEMO}). */
export function isHidden(info: Pick<WorkflowExecutionInfo, 'memo'>): boolean {
  return info.memo?.forkflowHidden === true;
}

export function toAgentRow(info: WorkflowExecutionInfo): AgentRow {
  const sa = info.typedSearchAttributes;
  const color = colorOfMemo(info.memo);
  return {
    agentId: sa.get(SA.agentId) ?? info.workflowId,
    workflowId: info.workflowId,
    runId: info.runId,
    label: sa.get(SA.label),
    state: sa.get(SA.state),
    parentId: sa.get(SA.parentId),
    parentRun: sa.get(SA.parentRun),
    parentTurn: sa.get(SA.parentTurn),
    rootId: sa.get(SA.rootId),
    querySource: sa.get(SA.querySource),
    temporalStatus: info.status.name,
    taskQueue: info.taskQueue,
    startTime: info.startTime.toISOString(),
    closeTime: info.closeTime?.toISOString(),
    turns: sa.get(SA.turns),
    totalTokens: sa.get(SA.totalTokens),
    ...(color ? { color } : {}),
  };
}
