/**
 * Session transcripts as markdown files a consolidation fork can Read and Grep: one file per
 * session, tool calls and results abbreviated, fork boilerplate dropped, each file capped
 * (head and tail kept: a session's outcome is at its end), and an INDEX.md listing them.
 */
import { blocksOf, type ContentBlock, type MessageParam } from '../../shared/messages-api/anthropic';
import { FORK_TAG } from '../../shared/prefix/fork-messages';

/** What the index and a file's header say about a session (from visibility). */
export interface SessionMeta {
  workflowId: string;
  runId: string;
  label?: string;
  querySource?: string;
  state?: string;
  temporalStatus: string;
  startedAt: string;
  closedAt?: string;
}

export const RENDER_LIMITS = {
  /** Characters kept of one staged transcript. */
  fileChars: 48_000,
  /** Of those, from the start (the rest from the end). */
  headChars: 8_000,
  toolInputChars: 400,
  toolResultChars: 1_200,
} as const;

const BOILERPLATE = new RegExp(`<${FORK_TAG}>[\\s\\S]*?</${FORK_TAG}>\\n?`, 'g');

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

function resultText(block: Extract<ContentBlock, { type: 'tool_result' }>): string {
  if (typeof block.content === 'string') return block.content;
  if (!Array.isArray(block.content)) return '';
  return block.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text.replace(BOILERPLATE, '').trim();
    case 'tool_use':
      return `[tool call ${block.name}] ${clip(JSON.stringify(block.input), RENDER_LIMITS.toolInputChars)}`;
    case 'tool_result':
      return `[tool result${block.is_error ? ', error' : ''}] ${clip(resultText(block), RENDER_LIMITS.toolResultChars)}`;
    case 'thinking':
    case 'redacted_thinking':
      return '';
    default:
      return `[${block.type}]`;
  }
}

/** One message as markdown (empty when nothing in it is worth showing). */
export function renderMessage(message: MessageParam): string {
  const body = blocksOf(message).map(renderBlock).filter(Boolean).join('\n\n');
  return body ? `## ${message.role}\n\n${body}` : '';
}

function capped(text: string): string {
  const { fileChars, headChars } = RENDER_LIMITS;
  if (text.length <= fileChars) return text;
  const tail = fileChars - headChars;
  return `${text.slice(0, headChars)}\n\n… [${text.length - fileChars} characters of the middle of this session omitted] …\n\n${text.slice(-tail)}`;
}

function header(meta: SessionMeta): string {
  const facts = [
    `- run: ${meta.runId}`,
    `- label: ${meta.label ?? '(none)'} · query source: ${meta.querySource ?? '(none)'}`,
    `- state: ${meta.state ?? meta.temporalStatus} · started ${meta.startedAt} · closed ${meta.closedAt ?? '(running)'}`,
  ];
  return `# Session ${meta.workflowId}\n\n${facts.join('\n')}\n`;
}

/** A whole session file. `messages` undefined means its transcript could not be read (`why`). */
export function renderSession(meta: SessionMeta, messages: MessageParam[] | undefined, why?: string): string {
  if (!messages) return `${header(meta)}\nTranscript not available: ${why ?? 'unknown reason'}.\n`;
  const body = messages.map(renderMessage).filter(Boolean).join('\n\n');
  return capped(`${header(meta)}\n${body}\n`);
}

/** The first line of the session's directive (the first user text outside the boilerplate). */
export function firstLineOf(messages: MessageParam[] | undefined): string {
  const first = messages?.find((m) => m.role === 'user');
  if (!first) return '';
  const text = blocksOf(first)
    .map((b) => (b.type === 'text' ? b.text.replace(BOILERPLATE, '') : ''))
    .join('\n');
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return clip(line.trim(), 120);
}

export interface IndexEntry {
  file: string;
  meta: SessionMeta;
  firstLine: string;
}

/** INDEX.md of the staged sessions, newest first. */
export function renderIndex(scope: string, entries: IndexEntry[], total: number, since: string | null): string {
  const window = since ? `closed after ${since}` : 'closed so far';
  const lines = entries.map((e) => `- ${e.file} · ${e.meta.closedAt ?? ''} · ${e.meta.label ?? ''} · ${e.meta.state ?? e.meta.temporalStatus}${e.firstLine ? ` · ${e.firstLine}` : ''}`);
  const omitted = total > entries.length ? `\n${total - entries.length} older session(s) were not staged.\n` : '';
  return `# Sessions of memory scope ${scope}\n\n${entries.length} session(s) ${window}, newest first.\n\n${lines.join('\n')}\n${omitted}`;
}
