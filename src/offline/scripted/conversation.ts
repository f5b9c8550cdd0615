/**
 * Reading a conversation the way the scripted model needs: where the latest user text is,
 * which step comes next, what the tools returned, and the directive's first line.
 */
import type { ContentBlock, MessageParam } from '../../shared/messages-api/anthropic';
import { isInstructionLine } from './parse';

/** A string is one text block, as the API reads it. */
function blocks(m: MessageParam): ContentBlock[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
}

export interface LatestUserText {
  /** Index of the message, or -1 when no user message has text. */
  index: number;
  text: string;
}

/**
 * A task notification (a sub-agent's report), a sub-agent's permission request or a
 * re-sent system reminder (criticalSystemReminder) is news for the agent, not a new script.
 */
const NOTIFICATION = /^\s*(?:<task-notification>|<system-reminder>|\[permission request from )/;

/**
 * The text blocks of the most recent user message that has any (a message holding only
 * tool_results does not count; one holding tool_results and text does). Texts that are
 * all task notifications are skipped: the script that started the sub-agents goes on.
 */
export function latestUserText(messages: MessageParam[]): LatestUserText {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as MessageParam;
    if (m.role !== 'user') continue;
    const texts = blocks(m).flatMap((b) => (b.type === 'text' ? [b.text] : []));
    if (texts.length > 0 && !texts.every((t) => NOTIFICATION.test(t))) return { index: i, text: texts.join('\n') };
  }
  return { index: -1, text: '' };
}

/** Where the script comes from: the latest user text, or a later provider compaction block. */
export interface ScriptCarrier extends LatestUserText {
  /** `compaction`: `text` is the summary of a compaction block in the assistant message at `index`. */
  kind: 'user' | 'compaction';
}

/** The summary of the last compaction block with content in an assistant message, and where the block is. */
function compactionSummary(m: MessageParam): { text: string; at: number } | undefined {
  const all = blocks(m);
  for (let j = all.length - 1; j >= 0; j--) {
    const b = all[j] as { type: string; content?: unknown };
    if (b.type === 'compaction' && typeof b.content === 'string' && b.content !== '') return { text: b.content, at: j };
  }
  return undefined;
}

/**
 * The script's carrier: the latest user text (see {@link latestUserText}), unless a provider
 * compaction block came after it — its summary then holds what is left of the script.
 */
export function scriptCarrier(messages: MessageParam[]): ScriptCarrier {
  const user = latestUserText(messages);
  for (let i = messages.length - 1; i > user.index; i--) {
    const m = messages[i] as MessageParam;
    const summary = m.role === 'assistant' ? compactionSummary(m) : undefined;
    if (summary) return { index: i, text: summary.text, kind: 'compaction' };
  }
  return { ...user, kind: 'user' };
}

/**
 * The steps taken since the carrier, as assistant message indexes: the finished assistant turns
 * after it, and a compaction block's own message when the reply went on after the block (the
 * compacting reply took the first step left).
 */
export function stepsTaken(messages: MessageParam[], carrier: ScriptCarrier): number[] {
  const after = finishedAssistantTurns(messages, carrier.index);
  if (carrier.kind !== 'compaction' || carrier.index >= messages.length - 1) return after;
  const m = messages[carrier.index] as MessageParam;
  const at = compactionSummary(m)?.at ?? -1;
  return blocks(m).length > at + 1 ? [carrier.index, ...after] : after;
}

/** Every text in a conversation, line by line: user and assistant text, tool results, compaction summaries. */
export function allTextLines(messages: MessageParam[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    for (const b of blocks(m)) {
      const raw = b as { type: string; text?: unknown; content?: unknown };
      const text = raw.type === 'text' ? raw.text : raw.type === 'tool_result' ? resultText(raw.content) : raw.type === 'compaction' ? raw.content : undefined;
      if (typeof text === 'string') out.push(...text.split(/\r?\n/));
    }
  }
  return out;
}

/**
 * Assistant messages after `index` that are followed by another message. A trailing
 * assistant message is a prefill, not a finished step.
 */
export function finishedAssistantTurns(messages: MessageParam[], index: number): number[] {
  const out: number[] = [];
  for (let i = index + 1; i < messages.length - 1; i++) if (messages[i]?.role === 'assistant') out.push(i);
  return out;
}

/** One tool call the model made, with what the tool returned. */
export interface ToolExchange {
  name: string;
  input: unknown;
  /** Text of the tool_result (string content or its text blocks joined), '' if none. */
  output: string;
  isError: boolean;
  answered: boolean;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((b: unknown) => (b && typeof b === 'object' && (b as { type?: unknown }).type === 'text' ? [(b as { text: string }).text] : []))
    .join('\n');
}

/** The tool calls of the assistant message at `index`, paired with their results. */
export function exchangesOf(messages: MessageParam[], index: number): ToolExchange[] {
  const next = messages[index + 1];
  const results = next && next.role === 'user' ? blocks(next) : [];
  return blocks(messages[index] as MessageParam).flatMap((b): ToolExchange[] => {
    if (b.type !== 'tool_use') return [];
    const r = results.find((x) => x.type === 'tool_result' && x.tool_use_id === b.id);
    if (!r || r.type !== 'tool_result') return [{ name: b.name, input: b.input, output: '', isError: false, answered: false }];
    return [{ name: b.name, input: b.input, output: resultText(r.content), isError: r.is_error === true, answered: true }];
  });
}

/** All tool calls made in the assistant turns after message `index`. */
export function exchangesAfter(messages: MessageParam[], index: number): ToolExchange[] {
  return finishedAssistantTurns(messages, index).flatMap((i) => exchangesOf(messages, i));
}

/** The user text without its instruction lines. */
export function withoutInstructions(text: string): string {
  return text
    .split(/\r?\n/)
    .filter((l) => !isInstructionLine(l))
    .join('\n')
    .trim();
}

const OPEN_TAG = /^<([A-Za-z][\w.:-]*)(?:\s[^>]*)?>/;

/**
 * The first non-blank line that is neither an instruction nor inside a tag block (from an
 * opening `<tag …>` line to its `</tag>` line: boilerplate such as the fork rules).
 */
export function directiveLine(text: string): string | undefined {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === '' || isInstructionLine(line)) continue;
    const open = OPEN_TAG.exec(line);
    if (open) {
      const close = `</${open[1] as string}>`;
      if (line.endsWith(close)) continue; // a one-line block
      if (line === open[0]) {
        const end = lines.findIndex((l, j) => j > i && l.endsWith(close));
        // An unclosed tag line is skipped on its own rather than swallowing the rest.
        if (end > i) i = end;
        continue;
      }
    }
    return line;
  }
  return undefined;
}
