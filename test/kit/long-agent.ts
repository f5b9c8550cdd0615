/**
 * The long-lived agent of the context-window tests and benchmark: it reads a file turn after
 * turn (each read adds the file to its context), reads a fact in turn 3, and in its last turn
 * recalls that fact — which it can only do if every compaction in between carried it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSummaryMessage } from '../../src/shared/context/summary';
import type { MessageParam } from '../../src/shared/messages-api/anthropic';
import type { OfflineModel, RequestLogEntry } from '../../src/offline';
import { toolStep } from './tree';

/** The fact planted in turn 3, and the words the last turn recalls it by. */
export const FACT = 'Fact: the code word is ORCHID-7';
export const RECALL = 'code word';

/** Writes `file` (about `bytesPerRead` bytes: about a quarter as many tokens per turn) and `fact.txt`. */
export function seedLongAgent(dir: string, bytesPerRead: number, file = 'notes.txt'): void {
  const line = (i: number) => `line ${i}: ${'x'.repeat(52)}`;
  const lines = Array.from({ length: Math.max(1, Math.round(bytesPerRead / 62)) }, (_, i) => line(i));
  writeFileSync(join(dir, file), lines.join('\n'));
  writeFileSync(join(dir, 'fact.txt'), `Something to keep in mind.\n${FACT}\n`);
}

/**
 * `turns` turns: reads of `file`, fact.txt in turn 3, and the recall last. `name` goes into the
 * directive, which every summary repeats: the agent's requests all carry it.
 */
export function longAgentScript(turns: number, name: string, file = 'notes.txt'): string {
  const read = toolStep('Read', { file_path: file });
  const lines = [`Read the notes, again and again (agent ${name}).`, `@repeat 2 ${read}`, toolStep('Read', { file_path: 'fact.txt' })];
  for (let left = turns - 4; left > 0; left -= Math.min(left, 1000)) lines.push(`@repeat ${Math.min(left, 1000)} ${read}`);
  lines.push(`@recall ${RECALL}`);
  return lines.join('\n');
}

/** A request's input tokens as the offline model counted them (all three parts). */
export function inputTokensOf(entry: RequestLogEntry): number {
  const u = entry.usage;
  return u ? u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens : 0;
}

/** Messages requests the offline model answered or refused, in order. */
export function servedRequests(model: OfflineModel): RequestLogEntry[] {
  return model.log.entries().filter((e) => e.path === '/v1/messages' && e.outcome !== 'pending');
}

/** Index of every forkflow summary message in a transcript (its compaction boundaries). */
export function summaryIndexes(transcript: MessageParam[]): number[] {
  return transcript.flatMap((m, i) => (isSummaryMessage(m) ? [i] : []));
}
