/**
 * A running sub-agent's progress so far, for its parent's `TaskOutput` with `block: false`
 * (seed 001: a background agent's output is readable while it runs), and the counters of
 * several at once for its `ListAgents`: their `status` query, cut to what a model needs. A
 * workflow cannot query another workflow; these activities do it for it.
 */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { totalTokens } from '../shared/messages-api/anthropic';
import { LISTED_PROGRESS_MAX } from '../shared/tree/agent-list';
import { statusQuery } from '../shared/wire/messages';
import type { ChildCounters, ChildProgress, TeamMemberFacts } from '../shared/wire/activity-io';
import type { ForkStatus } from '../shared/wire/status';
import { TEAM_NAME_PATTERN } from '../shared/tree/team';

/** Characters of the child's latest text shown (its end). */
const SHOWN = 8_000;

/**
 * How long ListAgents waits for one child's answer: a child whose worker is away shows what the
 * parent knows of it (its state and how long it has run) rather than holding up the list.
 */
const LIST_QUERY_DEADLINE_MS = 3_000;

const childrenProgressInput = z.strictObject({ agentIds: z.array(z.string().min(1)).max(LISTED_PROGRESS_MAX) });
const teamRosterInput = z.strictObject({ rootId: z.string().min(1).max(1000), team: z.string().regex(TEAM_NAME_PATTERN) });

/** A running agent's counters from its `status`: what TaskOutput's progress and ListAgents show of it. */
function countersOf(s: ForkStatus): ChildCounters {
  return { turns: s.turns, toolUses: s.toolUses, totalTokens: totalTokens(s.usage), ...(s.activity ? { doing: s.activity } : {}) };
}

export function createChildProgressActivities(deps: { client: Client }) {
  return {
    async childProgress(input: { agentId: string }): Promise<ChildProgress> {
      try {
        const s = await deps.client.workflow.getHandle(input.agentId).query(statusQuery);
        const text = s.lastText ?? '';
        return {
          found: true,
          state: s.state,
          ...countersOf(s),
          lastText: text.length > SHOWN ? `[… ${text.length - SHOWN} characters before this]${text.slice(-SHOWN)}` : text,
        };
      } catch {
        // Closed and past retention, or not answering: the caller says "no progress to show".
        return { found: false };
      }
    },

    /**
     * A team's members as its tree's root keeps them in its ledger (the root's `status`: its
     * `perAgent` rows carry names, teams and parents): the lead first, then its teammates in the
     * order they joined. Undefined when the root does not answer in time.
     */
    async teamRoster(raw: { rootId: string; team: string }): Promise<TeamMemberFacts[] | undefined> {
      const { rootId, team } = teamRosterInput.parse(raw);
      let rows;
      try {
        rows = (await deps.client.connection.withDeadline(Date.now() + LIST_QUERY_DEADLINE_MS, () => deps.client.workflow.getHandle(rootId).query(statusQuery))).perAgent ?? [];
      } catch {
        return undefined;
      }
      const mates = rows.filter((r) => r.team === team);
      const leadId = mates[0]?.parentId;
      const members = [...rows.filter((r) => r.agentId === leadId), ...mates];
      return members.map((r) => ({ agentId: r.agentId, ...(r.name ? { name: r.name } : {}), lead: r.agentId === leadId, state: r.state, turns: r.turns, toolUses: r.toolUses, totalTokens: totalTokens(r.usage) }));
    },

    /** The counters of running children, by agent id; one that does not answer in time is left out. */
    async childrenProgress(raw: { agentIds: string[] }): Promise<Record<string, ChildCounters>> {
      const { agentIds } = childrenProgressInput.parse(raw);
      const answers = await Promise.all(
        agentIds.map(async (agentId): Promise<[string, ChildCounters] | undefined> => {
          try {
            const s = await deps.client.connection.withDeadline(Date.now() + LIST_QUERY_DEADLINE_MS, () => deps.client.workflow.getHandle(agentId).query(statusQuery));
            return [agentId, countersOf(s)];
          } catch {
            return undefined;
          }
        }),
      );
      return Object.fromEntries(answers.filter((a) => a !== undefined));
    },
  };
}
