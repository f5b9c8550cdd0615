/**
 * Which rules the workflow's token estimates count images and documents by. Runs recorded
 * while they were counted as their JSON text (a 4.5 MB PNG as about 1.5 million tokens) may
 * have compacted, or not, on that count; they replay with it. Everything else counts them by
 * the provider's published rules (src/shared/messages-api/media-tokens.ts). The workflow does not know its
 * provider's kind (the worker's config does), so it counts by Anthropic's; the model activity
 * measures with the right provider's before a request is sent.
 */
import { patched } from '@temporalio/workflow';
import { blocksOf, type MessageParam } from '../../shared/messages-api/anthropic';
import { holdsMedia, type MediaRules } from '../../shared/messages-api/media-tokens';

/** The rules for estimating `messages`: Anthropic's when they hold an image or a document. */
export function mediaRulesFor(messages: readonly MessageParam[]): MediaRules {
  const media = messages.some((m) => holdsMedia(blocksOf(m)));
  return media ? 'anthropic' : 'bytes';
}

/** Runs recorded before Read returned images and PDFs offered its text-only definition; they replay offering it. */
export const READ_MEDIA_PATCH = 'forkflow-read-media-1';

/** Whether Read is offered as the text-only tool of before (asked only where Read is offered). */
export function textOnlyRead(names: readonly string[]): boolean {
  return names.includes('Read') && !patched(READ_MEDIA_PATCH);
}
