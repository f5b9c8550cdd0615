/**
 * Deterministic identifiers. Message and tool-use ids derive from the conversation, so the
 * same conversation always yields the same transcript (and replays compare equal);
 * request ids count requests per server.
 */
import { canonicalJson } from '../shared/base/hash';
import { sha256HexNative as sha256Hex } from './native-hash';
import type { ValidRequest } from './routes/validation';

/** Hash of what the model sees: model, system, tools and messages (not `stream`). */
export function conversationKey(req: ValidRequest): string {
  return sha256Hex(canonicalJson({ model: req.model, system: req.system, tools: req.tools, messages: req.messages }));
}

export function messageId(conversation: string): string {
  return `msg_offline_${conversation.slice(0, 24)}`;
}

export function toolUseId(conversation: string, index: number): string {
  return `toolu_offline_${sha256Hex(`${conversation}:tool_use:${index}`).slice(0, 24)}`;
}

export function requestId(seq: number): string {
  return `req_offline_${String(seq).padStart(8, '0')}`;
}
