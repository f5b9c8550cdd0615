/**
 * A running sub-agent's progress so far, for its parent's `TaskOutput` with `block: false`
 * (seed 001: a background agent's output is readable while it runs): its `status` query, cut to
 * what a model needs. A workflow cannot query another workflow; this activity does it for it.
 */
import type { Client } from '@temporalio/client';
import { totalInputTokens } from '../shared/anthropic';
import { statusQuery } from '../shared/messages';
import type { ChildProgress } from '../shared/activity-io';

/** Characters of the child's latest text shown (its end). */
const SHOWN = 8_000;

export function createChildProgressActivities(deps: { client: Client }) {
  return {
    async childProgress(input: { agentId: string }): Promise<ChildProgress> {
      try {
        const s = await deps.client.workflow.getHandle(input.agentId).query(statusQuery);
        const text = s.lastText ?? '';
        return {
          found: true,
          state: s.state,
          turns: s.turns,
          toolUses: s.toolUses,
          totalTokens: totalInputTokens(s.usage) + s.usage.outputTokens,
          ...(s.activity ? { doing: s.activity } : {}),
          lastText: text.length > SHOWN ? `[… ${text.length - SHOWN} characters before this]${text.slice(-SHOWN)}` : text,
        };
      } catch {
        // Closed and past retention, or not answering: the caller says "no progress to show".
        return { found: false };
      }
    },
  };
}
