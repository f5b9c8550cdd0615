/**
 * forkflow compaction's words: the request that asks the model for a summary of the older
 * turns, and the user message the agent goes on from. Pure; the model activity sends the
 * request (src/activities/model/compact.ts), the workflow appends the message.
 *
 * The request is the agent's own conversation with one more text block at its end, so the
 * summarising call reads the agent's cached prefix instead of paying for it again. It asks for
 * what Claude Code's compaction asks for — what was asked, what was done, files and decisions,
 * what is left — in forkflow's own wording.
 */
import { blocksOf, type MessageParam, type TextBlock } from '../messages-api/anthropic';

/** The tag around the summary request (the offline model recognises it: src/offline/scripted/summary.ts). */
export const COMPACTION_REQUEST_TAG = 'forkflow-compaction-request';
/** The tag that opens a summary message: where a transcript's compaction boundary is. */
export const COMPACTED_TAG = 'forkflow-compacted';

/** The text block appended to the conversation for the summarising call. */
export function compactionRequestBlock(instructions?: string): TextBlock {
  const lines = [
    `<${COMPACTION_REQUEST_TAG}>`,
    'This conversation is close to the limit of your context window. It will be replaced by a summary that you write now,',
    'and the work will go on from that summary and the most recent turns alone: write it so that nothing needed is lost.',
    'Do not call any tools. Answer with the summary only, in plain text, under these headings:',
    '1. Request: what was asked, with the goals, constraints and preferences that matter, and any later change of direction.',
    '2. Work done: the steps taken so far, in order, and what each found or produced (results, errors and how they were handled).',
    '3. Files and code: every file read, created or changed, with what matters about it (paths, names, key lines).',
    '4. Decisions: what was decided and why; approaches tried and given up.',
    '5. Facts to keep: names, numbers, identifiers and other details later steps need exactly as they were.',
    '6. Left to do: the tasks still open, and the very next step that was about to be taken.',
  ];
  if (instructions) lines.push(`Pay particular attention to: ${instructions}`);
  lines.push(`</${COMPACTION_REQUEST_TAG}>`);
  return { type: 'text', text: lines.join('\n') };
}

/** What a summary message records about its compaction (shown in its opening tag). */
export interface SummaryFacts {
  /** The agent's n-th compaction. */
  compaction: number;
  /** The turn before which it happened. */
  turn: number;
  /** Messages [from, to) of the conversation that it summarises. */
  from: number;
  to: number;
}

/**
 * The user message the agent continues from: a short notice in a tag block (so a reader sees
 * the boundary, and the text after it is the summary itself), then the summary.
 */
export function summaryMessage(summary: string, facts: SummaryFacts): MessageParam & { role: 'user' } {
  const notice = [
    `<${COMPACTED_TAG} compaction="${facts.compaction}" turn="${facts.turn}" messages="${facts.from}-${facts.to}">`,
    'The earlier part of this conversation was summarised to keep it within the context window. The summary follows;',
    'any turns after it are the most recent ones, unchanged. Continue the work from where it stopped.',
    `</${COMPACTED_TAG}>`,
  ].join('\n');
  return { role: 'user', content: [{ type: 'text', text: `${notice}\n${summary.trim()}` }] };
}

/** Whether a message opens a forkflow compaction (a transcript's boundary marker). */
export function isSummaryMessage(message: MessageParam): boolean {
  if (message.role !== 'user') return false;
  const first = blocksOf(message)[0];
  return first?.type === 'text' && first.text.startsWith(`<${COMPACTED_TAG} `);
}

/** Whether an assistant message holds a provider compaction block (the provider's boundary). */
export function hasCompactionBlock(message: MessageParam): boolean {
  return message.role === 'assistant' && blocksOf(message).some((b) => (b as { type: string }).type === 'compaction');
}

/** `max_tokens` of a summarising call: a tenth of the window, at most 8,192. */
export function summaryMaxTokens(window: number): number {
  return Math.max(256, Math.min(8_192, Math.floor(window / 10)));
}
