/**
 * The last check of a request's images and documents before it leaves: one the API would
 * refuse (src/shared/messages-api/media-limits.ts: over 5 MB, over 8000 px, not its named format, an
 * encrypted PDF, too many PDF pages) fails the call at once, non-retryable, naming the block
 * the way the API would (`messages.3.content.0.content.1`) and why. Tool results and fork
 * inputs are checked where they enter a conversation; this catches what came another way
 * (a snapshot taken elsewhere, a hook's rewrite) without paying for a 400.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { MessagesRequest } from '../../shared/messages-api/anthropic';
import { describeMediaIssues, requestMediaIssues } from '../../shared/messages-api/media-limits';
import type { MediaRules } from '../../shared/messages-api/media-tokens';

/** The failure type of a request refused for its media. */
export const MEDIA_REFUSED = 'MediaRefused';

/** Throws when the API would refuse an image or document of `body` (planned against `window`). */
export function checkMedia(turn: number, body: MessagesRequest, window: number | undefined): void {
  const issues = requestMediaIssues(body.messages, window);
  if (issues.length === 0) return;
  throw ApplicationFailure.create({
    type: MEDIA_REFUSED,
    message: `model call of turn ${turn} not sent: the API would refuse ${issues.length === 1 ? 'an image or document' : `${issues.length} images or documents`} of its request: ${describeMediaIssues(issues)}`,
    nonRetryable: true,
    details: [{ issues }],
  });
}

/** Whose published rules count a request's media: OpenAI's tiles on Chat Completions, else Anthropic's. */
export function mediaRulesOf(chat: unknown): MediaRules {
  return chat ? 'openai' : 'anthropic';
}
