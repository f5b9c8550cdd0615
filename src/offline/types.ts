/**
 * Response-side wire types the offline model produces (the request side lives in
 * `src/shared/messages-api/anthropic.ts`). Kept minimal: only what the emulator sends.
 */
import type { StopReason } from '../shared/messages-api/anthropic';

/** `usage` exactly as the Messages API spells it. */
export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /**
   * Per-iteration usage, present when the provider compacted (beta `compact-2026-01-12`): the
   * `compaction` pass, then the `message` pass. The top-level fields are the message pass's
   * alone: the compaction's tokens are not in them.
   */
  iterations?: WireIterationUsage[];
}

/** One sampling pass of a request (`usage.iterations[]`). */
export interface WireIterationUsage {
  type: 'compaction' | 'message';
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

/** The model's reasoning (`@think`): signed by the offline model, as the API signs its thinking. */
export interface OutputThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** The provider's compaction block: the summary that replaces everything before it. */
export interface OutputCompactionBlock {
  type: 'compaction';
  content: string | null;
  encrypted_content: string | null;
}

export type OutputBlock = OutputTextBlock | OutputToolUseBlock | OutputCompactionBlock | OutputThinkingBlock;

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
  /** Context editing the request asked for (`context_management` given): what was applied. */
  context_management?: { applied_edits: Record<string, unknown>[] };
}
