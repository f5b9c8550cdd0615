/**
 * What crosses between the workflow and the model activities about the context window: the
 * part of a model call's input that says how to cut and check its request, the failures a
 * call reports when its request does not fit, and the provider compaction a reply may carry.
 * JSON-safe types only. The input and result of a forkflow compaction call, an activity's, are
 * in ../wire/activity-io.ts with the other activities' (they hold a `ModelCallInput`).
 */
import type { Usage } from '../messages-api/anthropic';
import type { ContextEdit } from './edits';
import type { ContextView } from './view';

/** `ModelCallInput.context`: how the activity cuts, edits and checks the request. */
export interface ContextCallSpec extends ContextView {
  /** Tokens the request may hold (the model's window, or the fork's override). */
  window: number;
  /** Beta headers the request needs (the 1M window, provider context management). */
  betas?: string[];
  /** Provider context editing (`context_management.edits`) on this request. */
  edits?: ContextEdit[];
  /**
   * Refuse the call (failure `ContextOverThreshold`, before any reservation or request) when
   * the request would hold more than this many tokens: forkflow compacts first, then calls again.
   */
  compactAbove?: number;
  /** Policy `off`: the request is measured by the estimate but never refused; the provider decides. */
  measureOnly?: true;
}

/** Failure types (ApplicationFailure `type`) of a request that does not fit. Both are non-retryable. */
export const CONTEXT_FAILURE = {
  /** The provider's `prompt is too long: N tokens > M maximum`, or the same found before sending. */
  promptTooLong: 'ModelPromptTooLong',
  /** The request is over `compactAbove`: not sent. */
  overThreshold: 'ContextOverThreshold',
} as const;

/** A reply that carries the provider's compaction: what its summarising pass cost and what it left. */
export interface ProviderCompaction {
  /** Usage of the summarising pass (the `compaction` iteration; included in the call's `usage`). */
  usage: Usage;
  /** Input tokens of the request before it was compacted (what the summarising pass read). */
  tokensBefore: number;
}
