/**
 * The provider's context management, emulated (beta; wire shapes in
 * src/shared/context/edits.ts): the `context_management` parameter is validated, each edit
 * needs its beta header, and the request the model sees is edited as the real API edits it:
 *
 * - blocks before the last compaction block are dropped (the API ignores them; clients may
 *   drop them first, and forkflow does);
 * - `clear_thinking_20251015` removes thinking from all but the last `keep` assistant turns;
 * - `clear_tool_uses_20250919`, once the request passes its trigger, replaces the results of
 *   all but the last `keep` tool calls with a placeholder (not those of `exclude_tools`, and
 *   only if at least `clear_at_least` tokens go);
 * - `compact_20260112` (src/offline/routes/messages.ts acts on it): past its trigger the
 *   conversation is summarised into a compaction block first.
 */
import { blocksOf, type ContentBlock, type MessageParam } from '../shared/messages-api/anthropic';
import { betaFor, CLEARED_TOOL_RESULT, COMPACT_BETA, contextManagementParamSchema, type AppliedEdit, type ContextEdit } from '../shared/context/edits';
import { MIN_COMPACTION_TRIGGER } from '../shared/context/policy';
import { invalidRequest } from './errors';

/** Defaults of the real API. */
export const DEFAULT_COMPACTION_TRIGGER = 150_000;
export const DEFAULT_CLEARING_TRIGGER = 100_000;
export const DEFAULT_TOOL_USES_KEPT = 3;

type CompactEdit = Extract<ContextEdit, { type: 'compact_20260112' }>;

/** The request's edits, checked; throws 400 as the API would. */
export function contextEditsOf(body: Record<string, unknown>, betas: readonly string[]): ContextEdit[] {
  if (!('context_management' in body) || body.context_management === null) return [];
  const parsed = contextManagementParamSchema.safeParse(body.context_management);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidRequest(`context_management.${(issue?.path ?? []).join('.')}: ${issue?.message ?? 'Invalid input'}`);
  }
  const edits = parsed.data.edits ?? [];
  edits.forEach((edit, i) => {
    const beta = betaFor(edit);
    if (!betas.includes(beta)) {
      throw invalidRequest(`context_management.edits.${i}: Extra inputs are not permitted (the ${edit.type} edit needs the anthropic-beta header "${beta}").`);
    }
    if (edit.type === 'compact_20260112' && edit.trigger && edit.trigger.value < MIN_COMPACTION_TRIGGER) {
      throw invalidRequest(`context_management.edits.${i}.trigger.value: Input should be greater than or equal to ${MIN_COMPACTION_TRIGGER}`);
    }
  });
  const thinking = edits.findIndex((e) => e.type === 'clear_thinking_20251015');
  if (thinking > 0) throw invalidRequest('context_management.edits: clear_thinking_20251015 must be the first edit when it is combined with others.');
  return edits;
}

/** Compaction blocks belong in assistant turns, and need the compaction beta. */
export function checkCompactionBlocks(messages: MessageParam[], betas: readonly string[]): void {
  messages.forEach((m, i) =>
    blocksOf(m).forEach((b, j) => {
      if (b.type !== 'compaction') return;
      if (m.role !== 'assistant') throw invalidRequest(`messages.${i}.content.${j}: compaction blocks may only appear in assistant messages`);
      if (!betas.includes(COMPACT_BETA)) throw invalidRequest(`messages.${i}.content.${j}: compaction blocks need the anthropic-beta header "${COMPACT_BETA}"`);
    }),
  );
}

/** The conversation from the last compaction block on (the API drops what came before it). */
export function fromLastCompaction(messages: MessageParam[]): MessageParam[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const blocks = blocksOf(messages[i]!);
    const at = blocks.map((b) => b.type).lastIndexOf('compaction');
    if (at < 0) continue;
    if (i === 0 && at === 0) return messages;
    return [{ ...messages[i]!, content: blocks.slice(at) }, ...messages.slice(i + 1)];
  }
  return messages;
}

/** The compaction edit, if the request has one. */
export function compactEdit(edits: ContextEdit[]): CompactEdit | undefined {
  return edits.find((e): e is CompactEdit => e.type === 'compact_20260112');
}

function clearThinking(messages: MessageParam[], edit: Extract<ContextEdit, { type: 'clear_thinking_20251015' }>): { messages: MessageParam[]; turns: number } {
  const keep = edit.keep === 'all' || edit.keep?.type === 'all' ? Infinity : (edit.keep?.value ?? 1);
  const withThinking = messages.flatMap((m, i) => (m.role === 'assistant' && blocksOf(m).some(isThinking) ? [i] : []));
  const clear = new Set(withThinking.slice(0, Math.max(0, withThinking.length - keep)));
  return { messages: messages.map((m, i) => (clear.has(i) ? { ...m, content: blocksOf(m).filter((b) => !isThinking(b)) } : m)), turns: clear.size };
}

const isThinking = (b: ContentBlock): boolean => b.type === 'thinking' || b.type === 'redacted_thinking';

function clearToolUses(messages: MessageParam[], edit: Extract<ContextEdit, { type: 'clear_tool_uses_20250919' }>): { messages: MessageParam[]; uses: number } {
  const excluded = new Set(edit.exclude_tools ?? []);
  const names = new Map<string, string>();
  for (const m of messages) for (const b of blocksOf(m)) if (b.type === 'tool_use') names.set(b.id, b.name);
  const results: string[] = [];
  for (const m of messages) for (const b of blocksOf(m)) if (b.type === 'tool_result' && b.content !== CLEARED_TOOL_RESULT) results.push(b.tool_use_id);
  const keep = edit.keep?.value ?? DEFAULT_TOOL_USES_KEPT;
  const clear = new Set(results.slice(0, Math.max(0, results.length - keep)).filter((id) => !excluded.has(names.get(id) ?? '')));
  const out = messages.map((m) => {
    if (m.role !== 'user' || typeof m.content === 'string' || !m.content.some((b) => b.type === 'tool_result' && clear.has(b.tool_use_id))) return m;
    return { ...m, content: m.content.map((b) => (b.type === 'tool_result' && clear.has(b.tool_use_id) ? { ...b, content: CLEARED_TOOL_RESULT } : b)) };
  });
  return { messages: out, uses: clear.size };
}

/**
 * Applies the clearing edits, in order, to the conversation (`tokens` counts a conversation
 * as the request would send it). Edits that change nothing report nothing.
 */
export function applyClearing(messages: MessageParam[], edits: ContextEdit[], tokens: (messages: MessageParam[]) => number): { messages: MessageParam[]; applied: AppliedEdit[] } {
  const applied: AppliedEdit[] = [];
  let current = messages;
  for (const edit of edits) {
    const before = tokens(current);
    if (edit.type === 'clear_thinking_20251015') {
      const r = clearThinking(current, edit);
      if (r.turns === 0) continue;
      current = r.messages;
      applied.push({ type: edit.type, cleared_thinking_turns: r.turns, cleared_input_tokens: before - tokens(current) });
    } else if (edit.type === 'clear_tool_uses_20250919') {
      const trigger = edit.trigger ?? { type: 'input_tokens' as const, value: DEFAULT_CLEARING_TRIGGER };
      const measure = trigger.type === 'input_tokens' ? before : countToolUses(current);
      if (measure <= trigger.value) continue;
      const r = clearToolUses(current, edit);
      const cleared = before - tokens(r.messages);
      if (r.uses === 0 || cleared < (edit.clear_at_least?.value ?? 0)) continue;
      current = r.messages;
      applied.push({ type: edit.type, cleared_tool_uses: r.uses, cleared_input_tokens: cleared });
    }
  }
  return { messages: current, applied };
}

function countToolUses(messages: MessageParam[]): number {
  return messages.reduce((n, m) => n + blocksOf(m).filter((b) => b.type === 'tool_use').length, 0);
}
