/**
 * The recursion guard: a fork child may not fork. A child is recognised by its query source
 * or by the fork boilerplate in its own user messages — either is enough, so a child whose
 * query source was lost (a resumed or re-labelled run) is still caught. The refusal is a
 * tool result the model can act on, not a crash.
 */
import type { MessageParam } from '../messages-api/anthropic';
import { FORK_QUERY_SOURCE } from '../wire/constants';
import { hasForkTag } from './fork-messages';

export type RecursionVerdict = { allowed: true } | { allowed: false; detectedBy: 'query_source' | 'boilerplate'; message: string };

export const FORK_REFUSAL =
  'You are a forked worker: you cannot start or fork sub-agents. Do this part of the work yourself with your own tools, then report.';

export function forkRecursionGuard(agent: { querySource: string; messages: readonly MessageParam[] }): RecursionVerdict {
  if (agent.querySource === FORK_QUERY_SOURCE) return { allowed: false, detectedBy: 'query_source', message: FORK_REFUSAL };
  if (agent.messages.some(hasForkTag)) return { allowed: false, detectedBy: 'boilerplate', message: FORK_REFUSAL };
  return { allowed: true };
}
