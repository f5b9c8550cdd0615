/**
 * Server-sent events of a streamed Message: the event sequence the real API sends
 * (message_start → ping → per block start/deltas/stop → message_delta → message_stop),
 * with text and tool input split into a few deltas so clients exercise reassembly.
 */
import type { OutputBlock, WireMessage } from './types';

export interface SseEvent {
  event: string;
  data: unknown;
}

/** How many deltas a block's text or JSON is split into (at most). */
const DELTA_CHUNKS = 3;

/** Splits by code points, so no delta ends inside a surrogate pair. */
export function chunk(text: string, parts: number = DELTA_CHUNKS): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const size = Math.ceil(chars.length / parts);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** Splits into pieces of at most `size` code points (a paced stream's deltas). */
function pieces(text: string, size: number | undefined): string[] {
  if (size === undefined) return chunk(text);
  const chars = Array.from(text);
  return chunk(text, Math.max(1, Math.ceil(chars.length / size)));
}

function blockEvents(block: OutputBlock, index: number, size?: number): SseEvent[] {
  const events: SseEvent[] = [];
  const delta = (d: Record<string, unknown>): void => {
    events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
  };
  if (block.type === 'text') {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
    for (const text of pieces(block.text, size)) delta({ type: 'text_delta', text });
  } else if (block.type === 'thinking') {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } } });
    for (const thinking of pieces(block.thinking, size)) delta({ type: 'thinking_delta', thinking });
    delta({ type: 'signature_delta', signature: block.signature });
  } else if (block.type === 'compaction') {
    // The block opens empty and one delta carries its final value (the SDK assigns, not appends).
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'compaction', content: null, encrypted_content: null } } });
    delta({ type: 'compaction_delta', content: block.content, encrypted_content: block.encrypted_content });
  } else {
    const start = { type: 'tool_use', id: block.id, name: block.name, input: {} };
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } });
    // The real API opens tool input with an empty partial_json; clients must cope.
    delta({ type: 'input_json_delta', partial_json: '' });
    for (const part of pieces(JSON.stringify(block.input), size)) delta({ type: 'input_json_delta', partial_json: part });
  }
  events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  return events;
}

/** The complete event sequence of a message. */
export function messageEvents(message: WireMessage, opts: { chunkChars?: number } = {}): SseEvent[] {
  const { usage } = message;
  const start = {
    ...message,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    // Like the real API, the start carries the input side in full and a token or so of output.
    usage: { ...usage, output_tokens: Math.min(1, usage.output_tokens) },
  };
  return [
    { event: 'message_start', data: { type: 'message_start', message: start } },
    { event: 'ping', data: { type: 'ping' } },
    ...message.content.flatMap((block, index) => blockEvents(block, index, opts.chunkChars)),
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          output_tokens: usage.output_tokens,
          ...(usage.iterations ? { iterations: usage.iterations } : {}),
        },
        ...(message.context_management ? { context_management: message.context_management } : {}),
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}

/** One event on the wire; `event:` line always present. */
export function formatEvent(e: SseEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}
