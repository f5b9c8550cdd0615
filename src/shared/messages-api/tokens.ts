/**
 * The one token estimate used everywhere offline (emulator accounting, budgets before a
 * provider reports usage, benchmarks): about 4 UTF-8 bytes a token, plus a small overhead
 * per message. No local tokenizer exists for current models, so an estimate it is.
 */
import { canonicalJson, utf8Length } from '../base/hash';

export const MESSAGE_OVERHEAD_TOKENS = 3;

export function estimateTextTokens(text: string): number {
  return Math.ceil(utf8Length(text) / 4);
}

/** Tokens of any JSON value (a block, a tool definition), measured on its canonical JSON. */
export function estimateJsonTokens(value: unknown): number {
  return estimateTextTokens(canonicalJson(value));
}
