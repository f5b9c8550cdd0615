/**
 * `ListAgents`: the model's view of its own sub-agents (seed 002's `agent_list`), one row per
 * child on record with its state, turns, tokens, duration and last activity, plus counts.
 * Answered by the workflow from its child table, and for running children from their own
 * answers (one local activity asks them): a pure function of the records, those answers and the
 * workflow's clock. Offered only when the tree asks (`subAgents.listAgents`), so other
 * agents' tool definitions keep their bytes. The tool's name, input and definition are with the
 * other sub-agent tools' in agent-tools.ts.
 */
import type { ChildCounters, TeamMemberFacts } from '../wire/activity-io';
import { totalTokens } from '../messages-api/anthropic';
import type { ChildRecord, ChildState } from './tree-input';

/** Running children whose counters one ListAgents call asks for (the oldest first); the rest show what the parent knows. */
export const LISTED_PROGRESS_MAX = 50;

/** One member of a teammate's team as its ListAgents shows it. */
export interface TeamMemberRow {
  id: string;
  name?: string;
  role: 'lead' | 'teammate';
  state: 'running' | 'ended';
  turns: number;
  tool_uses: number;
  tokens_used: number;
  /** The caller itself. */
  you?: true;
}

export interface TeamView {
  name: string;
  members?: TeamMemberRow[];
  /** Why there are no members: the tree's root did not answer in time. */
  note?: string;
}

/** A teammate's team for its ListAgents: `members` as the tree's ledger has them (undefined: not read). */
export function teamView(args: { team: string; self: string; members: readonly TeamMemberFacts[] | undefined }): TeamView {
  if (!args.members) return { name: args.team, note: "The team's roster could not be read just now: try again, or SendMessage to \"lead\"." };
  return {
    name: args.team,
    members: args.members.map((m) => ({
      id: m.agentId,
      ...(m.name ? { name: m.name } : {}),
      role: m.lead ? 'lead' : 'teammate',
      state: m.state,
      turns: m.turns,
      tool_uses: m.toolUses,
      tokens_used: m.totalTokens,
      ...(m.agentId === args.self ? { you: true as const } : {}),
    })),
  };
}

/** One sub-agent as ListAgents shows it (seed 002's names, snake_case like its other fields). */
export interface AgentListRow {
  id: string;
  name?: string;
  description: string;
  kind: 'fork' | 'spawn';
  subagent_type?: string;
  state: ChildState;
  mode: ChildRecord['mode'];
  depth: number;
  started_at: string;
  /** Running: how long so far by the workflow's clock; finished: the child's own duration. */
  running_ms?: number;
  duration_ms?: number;
  /** Its own counters: a running child's as it answered just now (absent: it did not answer in time). */
  turns?: number;
  tool_uses?: number;
  tokens_used?: number;
  /** The token budget it was granted, where the tree keeps one. */
  budget_tokens?: number;
  last_activity: string;
}

export interface AgentList {
  agents: AgentListRow[];
  running_count: number;
  completed_count: number;
  failed_count: number;
  killed_count: number;
  timeout_count: number;
  total_count: number;
  /** Finished children no longer on record (the table keeps the newest `keepCompleted`). */
  not_listed?: number;
  /** A teammate's team (its lead and teammates). */
  team?: TeamView;
}

function rowOf(c: ChildRecord, depth: number, now: number, counters: ChildCounters | undefined): AgentListRow {
  const started = Date.parse(c.startedAt);
  const head = {
    id: c.agentId,
    ...(c.name ? { name: c.name } : {}),
    description: c.description,
    kind: c.kind,
    ...(c.subagentType ? { subagent_type: c.subagentType } : {}),
    state: c.state,
    mode: c.mode,
    depth,
    started_at: c.startedAt,
    ...(c.budget !== undefined ? { budget_tokens: c.budget } : {}),
  };
  const o = c.result;
  if (!o) {
    const asked = counters ? { turns: counters.turns, tool_uses: counters.toolUses, tokens_used: counters.totalTokens } : {};
    return { ...head, running_ms: Math.max(0, now - started), ...asked, last_activity: counters?.doing ? `running: ${counters.doing}` : `running since ${c.startedAt}` };
  }
  const ended = new Date(started + o.durationMs).toISOString();
  return {
    ...head,
    duration_ms: o.durationMs,
    ...(o.turns !== undefined ? { turns: o.turns } : {}),
    tool_uses: o.toolUses,
    tokens_used: totalTokens(o.usage),
    last_activity: `${o.status} at ${ended}${o.error ? `: ${o.error.slice(0, 200)}` : ''}`,
  };
}

/** The running children among `shown` whose counters a list asks for: the oldest first, at most LISTED_PROGRESS_MAX. */
export function childrenToAsk(shown: readonly ChildRecord[]): string[] {
  return shown.filter((c) => c.state === 'running').slice(0, LISTED_PROGRESS_MAX).map((c) => c.agentId);
}

/** The records a list shows (all, or those in `state`). */
export function shownRecords(records: readonly ChildRecord[], state?: ChildState): readonly ChildRecord[] {
  return state ? records.filter((c) => c.state === state) : records;
}

/**
 * The list for an agent at `depth` whose children are `records` (oldest first), at workflow
 * time `now` (ms). `folded`: finished children trimmed off the record; `counters`: running
 * children's own counters, by agent id, as they answered.
 */
export function agentList(records: readonly ChildRecord[], args: { depth: number; now: number; folded: number; state?: ChildState; counters?: Readonly<Record<string, ChildCounters>> }): AgentList {
  const counts = { running: 0, completed: 0, failed: 0, killed: 0, timeout: 0 };
  for (const c of records) counts[c.state] += 1;
  const shown = shownRecords(records, args.state);
  return {
    agents: shown.map((c) => rowOf(c, args.depth + 1, args.now, args.counters?.[c.agentId])),
    running_count: counts.running,
    completed_count: counts.completed,
    failed_count: counts.failed,
    killed_count: counts.killed,
    timeout_count: counts.timeout,
    total_count: records.length,
    ...(args.folded > 0 ? { not_listed: args.folded } : {}),
  };
}
