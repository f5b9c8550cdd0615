/**
 * Response-side wire types the offline model produces (the request side lives in
 * `src/shared/anthropic.ts`). Kept minimal: only what the emulator sends.
 */
import type { StopReason } from '../shared/anthropic';

/** `usage` exactly as the Messages API spells it. */
export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export interface OutputTextBlock {
  type: 'text';
  text: string;
}

export interface OutputToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type OutputBlock = OutputTextBlock | OutputToolUseBlock;

/** A complete response message (`type: "message"`). */
export interface WireMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: OutputBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  usage: WireUsage;
}
