/**
 * Turns a request context and a conversation into the exact Messages API body. Pure and
 * shared, so a parent and its forks (and any process, any replay) build identical bytes:
 * tool-call pairing is repaired here, cache breakpoints are placed here, and sampling
 * settings never reach API 2026-10-21.
 */
import type { CacheControl, ContentBlock, MessageParam, MessagesRequest, TextBlock, ToolResultBlock } from './anthropic';
import { blocksOf, stripCacheControl, toolUsesOf } from './anthropic';
import type { BlockPosition } from '../prefix/fork-messages';
import type { RequestContext } from '../wire/messages';

export const MAX_CACHE_BREAKPOINTS = 4;
export const INTERRUPTED_RESULT = 'No result was recorded for this tool call (interrupted).';
const EPHEMERAL: CacheControl = { type: 'ephemeral' };
const EPHEMERAL_1H: CacheControl = { type: 'ephemeral', ttl: '1h' };

export interface BuildOptions {
  /** Last block shared by all siblings of a fork: gets its own breakpoint. */
  sharedPrefixEnd?: BlockPosition;
  stream?: boolean;
  /**
   * `1h`: every breakpoint carries the 1-hour TTL, the caller's own markers on system and tools
   * included (the API wants no 1h entry after a 5m one). Default: the 5-minute default.
   */
  ttl?: '5m' | '1h';
}

/** `items` with every marker set to the 1-hour TTL (the same array when none is marked). */
function markedOneHour<T extends { cache_control?: CacheControl | null }>(items: T[]): T[] {
  return items.some((b) => b.cache_control) ? items.map((b) => (b.cache_control ? { ...b, cache_control: EPHEMERAL_1H } : b)) : items;
}

/** A repaired conversation, and where a block of the original conversation ended up in it. */
interface Repaired {
  messages: MessageParam[];
  /** Maps a position in the input conversation to the same block in `messages`. */
  position(at: BlockPosition): BlockPosition | undefined;
}

/**
 * Every assistant `tool_use` must be answered by a `tool_result` in the next user message.
 * Unanswered calls (a snapshot taken mid-round, a crash) get an error result, added the same
 * way wherever the history is replayed, so parent and fork bytes stay identical.
 */
export function repairToolPairing(messages: MessageParam[]): MessageParam[] {
  return repair(messages).messages;
}

function repair(messages: MessageParam[]): Repaired {
  const out: MessageParam[] = [];
  // For each input message: its index in `out`, and (when its blocks were reordered) where
  // each of its blocks went. Repair inserts messages and moves blocks, so a position taken on
  // the input (a fork's shared-prefix end) must be translated before it is marked.
  const moved: { index: number; blocks?: number[] }[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    out.push(message);
    moved[i] = { index: out.length - 1 };
    const uses = toolUsesOf(message);
    if (uses.length === 0) continue;
    const next = messages[i + 1];
    if (i === messages.length - 1) break; // a trailing assistant turn is the caller's business
    const answered = new Set(
      next && next.role === 'user' ? blocksOf(next).filter((b): b is ToolResultBlock => b.type === 'tool_result').map((b) => b.tool_use_id) : [],
    );
    const missing: ToolResultBlock[] = uses
      .filter((u) => !answered.has(u.id))
      .map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: INTERRUPTED_RESULT, is_error: true }));
    if (missing.length === 0) continue;
    if (next && next.role === 'user') {
      const blocks = blocksOf(next);
      const results = blocks.filter((b) => b.type === 'tool_result');
      const rest = blocks.filter((b) => b.type !== 'tool_result');
      out.push({ ...next, content: [...results, ...missing, ...rest] });
      let r = 0;
      let o = results.length + missing.length;
      moved[i + 1] = { index: out.length - 1, blocks: blocks.map((b) => (b.type === 'tool_result' ? r++ : o++)) };
      i++;
    } else {
      out.push({ role: 'user', content: missing });
    }
  }
  return {
    messages: out,
    position(at) {
      const m = moved[at.messageIndex];
      if (!m) return undefined;
      // -1: the message's last block that can carry a marker (a by-reference fork does not
      // hold the message, only its position).
      if (at.blockIndex < 0) {
        const last = lastMarkable(out[m.index]!);
        return last === undefined ? undefined : { messageIndex: m.index, blockIndex: last };
      }
      const blockIndex = m.blocks ? m.blocks[at.blockIndex] : at.blockIndex;
      return blockIndex === undefined ? undefined : { messageIndex: m.index, blockIndex };
    },
  };
}

function canCarryCacheControl(block: ContentBlock): boolean {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

function withoutCacheControl(message: MessageParam): MessageParam {
  if (typeof message.content === 'string') return message;
  const content = message.content.map(stripCacheControl);
  return content.every((b, i) => b === message.content[i]) ? message : { ...message, content };
}

/** Last block of a message that may carry a marker, or undefined. */
function lastMarkable(message: MessageParam): number | undefined {
  const blocks = blocksOf(message);
  for (let b = blocks.length - 1; b >= 0; b--) if (canCarryCacheControl(blocks[b]!)) return b;
  return undefined;
}

function markBlock(messages: MessageParam[], at: BlockPosition, marker: CacheControl): boolean {
  const message = messages[at.messageIndex];
  if (!message) return false;
  const blocks = blocksOf(message);
  const block = blocks[at.blockIndex];
  if (!block || !canCarryCacheControl(block) || ('cache_control' in block && block.cache_control)) return false;
  const content = blocks.slice();
  content[at.blockIndex] = { ...block, cache_control: marker };
  messages[at.messageIndex] = { ...message, content };
  return true;
}

/** Marker positions in priority order: shared fork prefix, request end, previous request end. */
function messageBreakpoints(messages: MessageParam[], shared?: BlockPosition): BlockPosition[] {
  const points: BlockPosition[] = [];
  if (shared) points.push(shared);
  const lastIndex = messages.length - 1;
  const endBlock = lastIndex >= 0 ? lastMarkable(messages[lastIndex]!) : undefined;
  if (endBlock !== undefined) points.push({ messageIndex: lastIndex, blockIndex: endBlock });
  // The end of the previous request (the user turn before the latest assistant turn) keeps a
  // fork's own growing prefix reachable even when one round adds more than the look-back.
  for (let m = lastIndex - 2; m >= 0; m--) {
    if (messages[m]!.role === 'user' && messages[m + 1]!.role === 'assistant') {
      const b = lastMarkable(messages[m]!);
      if (b !== undefined) points.push({ messageIndex: m, blockIndex: b });
      break;
    }
  }
  return points;
}

/**
 * Joins consecutive turns of one role into one (a by-reference fork's directive follows a
 * prefix that ended with a user turn). Applied after marking, so markers stay on their
 * blocks; conversations without such runs come back unchanged, byte for byte.
 */
export function mergeConsecutiveTurns(messages: MessageParam[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const message of messages) {
    const previous = out[out.length - 1];
    if (previous && previous.role === message.role) out[out.length - 1] = { ...previous, content: [...blocksOf(previous), ...blocksOf(message)] };
    else out.push(message);
  }
  return out;
}

/** Builds the `POST /v1/messages` body for a context and conversation. */
export function buildMessagesRequest(ctx: RequestContext, conversation: MessageParam[], opts: BuildOptions = {}): MessagesRequest {
  const repaired = repair(conversation);
  const messages = repaired.messages.map(withoutCacheControl);
  const shared = opts.sharedPrefixEnd && repaired.position(opts.sharedPrefixEnd);
  const hour = opts.ttl === '1h';
  const marker = hour ? EPHEMERAL_1H : EPHEMERAL;
  let system = hour && typeof ctx.system !== 'string' ? markedOneHour(ctx.system) : ctx.system;
  const tools = hour ? markedOneHour(ctx.tools) : ctx.tools;
  let used =
    (typeof system === 'string' ? 0 : system.filter((b) => b.cache_control).length) + tools.filter((t) => t.cache_control).length;

  // End of tools + system: the part every request of this cache key shares.
  if (used === 0) {
    const before = system;
    if (typeof system === 'string' && system.length > 0) system = [{ type: 'text', text: system, cache_control: marker }];
    else if (Array.isArray(system) && system.length > 0) {
      const blocks: TextBlock[] = system.slice();
      blocks[blocks.length - 1] = { ...blocks[blocks.length - 1]!, cache_control: marker };
      system = blocks;
    }
    if (system !== before) used++;
  }
  for (const point of messageBreakpoints(messages, shared)) {
    if (used >= MAX_CACHE_BREAKPOINTS) break;
    if (markBlock(messages, point, marker)) used++;
  }

  const body: MessagesRequest = { model: ctx.model, max_tokens: ctx.maxTokens, messages: mergeConsecutiveTurns(messages) };
  if (!(typeof system === 'string' && system.length === 0)) body.system = system;
  if (tools.length > 0) body.tools = tools;
  if (ctx.thinking) body.thinking = ctx.thinking;
  if (ctx.toolChoice) body.tool_choice = ctx.toolChoice;
  if (ctx.mcpServers) body.mcp_servers = ctx.mcpServers;
  if (opts.stream) body.stream = true;
  return body;
}
