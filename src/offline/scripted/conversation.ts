/**
 * Reading a conversation the way the scripted model needs: where the latest user text is,
 * which step comes next, what the tools returned, and the directive's first line.
 */
import type { ContentBlock, MessageParam } from '../../shared/anthropic';
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

/** A task notification (a sub-agent's report) is news for the agent, not a new script. */
const NOTIFICATION = /^\s*<task-notification>/;

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
