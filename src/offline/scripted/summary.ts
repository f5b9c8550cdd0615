/**
 * The scripted model's summaries: what it answers to forkflow's compaction request, and what
 * its provider compaction block holds. Deterministic, and written so that the work can go on
 * from the summary alone, as a real model's summary should allow:
 *
 * - its first line is the task's directive (the fork report's `Scope:` stays the same);
 * - then what was done (steps taken, tool calls by name), the files the tools named, and every
 *   line of the summarised conversation that starts with `Fact:` (an earlier summary's too, so
 *   facts outlive any number of compactions);
 * - then what is left: the script's remaining steps as instruction lines, so the next request
 *   goes on at the step it would have taken (`@repeat` runs re-counted, a report after a
 *   finished tool step).
 */
import { blocksOf, type MessageParam } from '../../shared/messages-api/anthropic';
import { COMPACTION_REQUEST_TAG } from '../../shared/context/summary';
import { allTextLines, directiveLine, scriptCarrier, stepsTaken } from './conversation';
import { MAX_REPEAT, parseScript, ScriptError, type Step } from './parse';
import { withoutLineNumber } from './report';

const FACT = /^\s*fact:/i;
const FILES = /^Files: (.+)$/;
const MAX_FACTS = 50;
const MAX_FILES = 20;

function requestBlockIndex(m: MessageParam | undefined): number {
  if (!m || m.role !== 'user') return -1;
  return blocksOf(m).findIndex((b) => b.type === 'text' && b.text.trimStart().startsWith(`<${COMPACTION_REQUEST_TAG}>`));
}

/** Whether a request is forkflow's compaction request (its last user turn holds the request block). */
export function isSummaryRequest(messages: MessageParam[]): boolean {
  return requestBlockIndex(messages[messages.length - 1]) >= 0;
}

/** The conversation being summarised: the request's messages without the request block. */
export function withoutSummaryRequest(messages: MessageParam[]): MessageParam[] {
  const last = messages[messages.length - 1];
  const at = requestBlockIndex(last);
  if (!last || at < 0) return messages;
  const rest = blocksOf(last).filter((_, i) => i !== at);
  return rest.length > 0 ? [...messages.slice(0, -1), { ...last, content: rest }] : messages.slice(0, -1);
}

/** The remaining steps as instruction lines, runs of one step written as `@repeat`. */
function remainingLines(steps: Step[]): string[] {
  const lines: string[] = [];
  for (let i = 0; i < steps.length; ) {
    let n = 1;
    while (i + n < steps.length && steps[i + n]!.line === steps[i]!.line && n < MAX_REPEAT) n++;
    lines.push(n > 1 ? `@repeat ${n} ${steps[i]!.line}` : steps[i]!.line);
    i += n;
  }
  return lines;
}

function unique(items: string[], max: number): string[] {
  return [...new Set(items)].slice(0, max);
}

/** Tool calls by name, and the paths their inputs named. */
function toolFacts(messages: MessageParam[]): { calls: string; files: string[] } {
  const counts = new Map<string, number>();
  const files: string[] = [];
  for (const m of messages) {
    for (const b of blocksOf(m)) {
      if (b.type !== 'tool_use') continue;
      counts.set(b.name, (counts.get(b.name) ?? 0) + 1);
      const input = (b.input ?? {}) as Record<string, unknown>;
      for (const key of ['file_path', 'path']) if (typeof input[key] === 'string') files.push(input[key]);
    }
  }
  const calls = [...counts].map(([name, n]) => `${name} ×${n}`).join(', ');
  return { calls: calls || 'none', files };
}

/** The scripted model's summary of `messages` (see the header). */
export function offlineSummary(messages: MessageParam[]): string {
  const carrier = scriptCarrier(messages);
  let steps: Step[] = [];
  try {
    steps = parseScript(carrier.text);
  } catch (e) {
    if (!(e instanceof ScriptError)) throw e;
  }
  const taken = stepsTaken(messages, carrier).length;
  const left = steps.slice(taken);
  const lines = remainingLines(left);
  if (left.length === 0 && taken > 0 && steps[taken - 1]?.action.kind === 'tool') lines.push('@report');
  const text = allTextLines(messages);
  const earlierFiles = text.flatMap((l) => FILES.exec(l)?.[1]?.split(', ') ?? []);
  const tools = toolFacts(messages);
  // A Read result numbers its lines: the fact is the line without its number.
  const facts = unique(text.map(withoutLineNumber).filter((l) => FACT.test(l)), MAX_FACTS);
  const files = unique([...earlierFiles, ...tools.files], MAX_FILES);
  return [
    directiveLine(carrier.text) ?? '(no directive)',
    `Summary of ${messages.length} messages by the offline model: ${taken} of ${steps.length} scripted steps taken since the latest instructions; tool calls: ${tools.calls}.`,
    ...(files.length > 0 ? [`Files: ${files.join(', ')}`] : []),
    ...facts,
    lines.length > 0 ? 'Left to do:' : 'Left to do: nothing.',
    ...lines,
  ].join('\n');
}
