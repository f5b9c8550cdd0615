/**
 * The events the live stream records, as its publisher (./live-stream.ts) writes them, and what
 * is left of one when the agent's content is not served (skipTranscript): the facts stay, the
 * words go. src/shared/streams/stream-events.ts defines the events themselves.
 */
import type { PublishedStreamEvent } from '../../shared/streams/stream-events';

/** An event body as a publisher here writes it: `v` and `agentId` are added. */
export type Body = PublishedStreamEvent extends infer E ? (E extends PublishedStreamEvent ? Omit<E, 'v' | 'agentId'> : never) : never;

/** An event with its content taken out (skipTranscript): the facts stay, the words go. */
export function withoutContent(body: Body): Body {
  switch (body.type) {
    case 'tool-use':
      return { ...body, input: null };
    case 'tool-result':
    case 'message': {
      const { summary: _summary, ...rest } = body as Body & { summary?: string };
      return { ...rest, preview: '' } as Body;
    }
    case 'turn-end': {
      const { text: _text, textChars: _chars, ...rest } = body;
      return rest;
    }
    case 'done': {
      const { error: _error, ...rest } = body;
      return rest;
    }
    default:
      return body;
  }
}
