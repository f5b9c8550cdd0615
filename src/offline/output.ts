/**
 * Applies the request's output limits to a scripted response (stop sequences, then
 * `max_tokens`) and counts its output tokens with the shared estimate.
 */
import type { StopReason } from '../shared/messages-api/anthropic';
import { utf8Length } from '../shared/base/hash';
import { estimateJsonTokens, estimateTextTokens } from '../shared/messages-api/tokens';
import type { OutputBlock } from './types';

export interface LimitedOutput {
  content: OutputBlock[];
  stopReason: StopReason;
  stopSequence: string | null;
  outputTokens: number;
}

/** Output tokens of one block: its text, a tool call's name and input, or a compaction's summary. */
export function blockTokens(b: OutputBlock): number {
  if (b.type === 'text') return estimateTextTokens(b.text);
  if (b.type === 'compaction') return estimateTextTokens(b.content ?? '');
  if (b.type === 'thinking') return estimateTextTokens(b.thinking);
  return estimateJsonTokens({ name: b.name, input: b.input });
}

/** The longest prefix of `text` whose token estimate fits `budget`. */
function fitText(text: string, budget: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    bytes += utf8Length(ch);
    if (bytes > budget * 4) break;
    out += ch;
  }
  return out;
}

function cutAtStopSequence(content: OutputBlock[], stops: string[]): { content: OutputBlock[]; stop: string | null } {
  for (let i = 0; i < content.length; i++) {
    const b = content[i] as OutputBlock;
    if (b.type !== 'text') continue;
    let best: { at: number; seq: string } | undefined;
    for (const seq of stops) {
      const at = b.text.indexOf(seq);
      if (at >= 0 && (!best || at < best.at)) best = { at, seq };
    }
    if (best) {
      const cut: OutputBlock[] = best.at > 0 ? [{ type: 'text', text: b.text.slice(0, best.at) }] : [];
      return { content: [...content.slice(0, i), ...cut], stop: best.seq };
    }
  }
  return { content, stop: null };
}

/**
 * Truncates like the real model would stop: at the first stop sequence in a text block
 * (`stop_sequence`), or where the output reaches `maxTokens` (`max_tokens`; a tool call
 * that does not fit is left out rather than cut).
 */
export function applyLimits(
  content: OutputBlock[],
  natural: 'end_turn' | 'tool_use',
  maxTokens: number,
  stopSequences: string[] = [],
  /** Output the context window leaves room for, when less than `maxTokens`: past it, `model_context_window_exceeded`. */
  windowRoom = Infinity,
): LimitedOutput {
  const { content: afterStops, stop } = cutAtStopSequence(content, stopSequences);
  let stopReason: StopReason = stop !== null ? 'stop_sequence' : natural;
  const byWindow = windowRoom < maxTokens;
  if (byWindow) maxTokens = Math.max(0, windowRoom);
  const kept: OutputBlock[] = [];
  let used = 0;
  for (const b of afterStops) {
    const t = blockTokens(b);
    if (used + t <= maxTokens) {
      kept.push(b);
      used += t;
      continue;
    }
    stopReason = byWindow ? 'model_context_window_exceeded' : 'max_tokens';
    if (b.type === 'text') {
      const text = fitText(b.text, maxTokens - used);
      if (text !== '') {
        kept.push({ type: 'text', text });
        used += estimateTextTokens(text);
      }
    }
    break;
  }
  return { content: kept, stopReason, stopSequence: stopReason === 'stop_sequence' ? stop : null, outputTokens: used };
}
