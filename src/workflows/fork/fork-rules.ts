/**
 * Which worker rules a fork's opening carries. The rules are part of the fork's first user
 * message, which later calls rebuild from a recipe (activities/conversation.ts): a run
 * recorded with the first rules must keep them, so the seed's rules are patched in.
 */
import { patched } from '@temporalio/workflow';
import { FORK_QUERY_SOURCE } from '../../shared/wire/constants';
import { FORK_RULES_VERSION, type OpeningOptions } from '../../shared/prefix/fork-messages';
import type { ForkInput } from '../../shared/wire/fork-input';

/** Before this patch a fork was told to commit only when asked and to keep its report "short" (seed 003: commit, under 500 words). */
export const FORK_RULES_PATCH = 'forkflow-fork-rules-2';

/** The rules option for this run's opening: the seed's for a fresh fork started with this code, nothing otherwise. */
export function forkRules(input: ForkInput): Pick<OpeningOptions, 'rules'> {
  const writesOpening = !input.continuation && (input.parentRef !== undefined || input.parent !== undefined || input.querySource === FORK_QUERY_SOURCE);
  return writesOpening && patched(FORK_RULES_PATCH) ? { rules: FORK_RULES_VERSION } : {};
}
