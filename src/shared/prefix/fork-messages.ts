/**
 * Building a fork's opening messages from its parent's history so that every sibling from
 * one parent turn shares the parent's bytes up to the directive (SEMANTICS "Building a
 * fork's messages"). The wording is forkflow's own.
 */
import type { ContentBlock, MessageParam, TextBlock, ToolResultBlock } from '../messages-api/anthropic';
import { blocksOf, toolUsesOf } from '../messages-api/anthropic';

/** The tag that marks a fork's directive; also the second half of the recursion guard. */
export const FORK_TAG = 'forkflow-worker';

/** Identical in every sibling, so their requests differ only after the last placeholder. */
export const PLACEHOLDER_RESULT = 'Handed to a forked worker; its report arrives separately.';

/** The first rules (runs recorded before the seed's were adopted keep them: their openings must stay byte-identical). */
const WORKER_RULES_1 = [
  'You are a forked worker, not the main agent. The conversation above is context you inherited; the directive below is your whole job.',
  'Rules:',
  '1. Do not start or fork sub-agents; do the work yourself.',
  '2. Do not converse or ask questions; nobody will answer. Act.',
  '3. Use your tools directly, and read files before changing them.',
  '4. Commit changes only if the directive asks for a commit.',
  '5. Keep the final report short. Start it with "Scope:" and use these lines:',
  '   Scope: the directive in one line',
  '   Result: what you found or did',
  '   Key files: the files that matter',
  '   Files changed: paths, or none',
  '   Issues: problems or open questions, or none',
  'The directive is the text after this block.',
].join('\n');

/** The rules as seed 003's fork child protocol states them: commit what you change, report in under 500 words. */
const WORKER_RULES_2 = [
  'You are a forked worker, not the main agent. The conversation above is context you inherited; the directive below is your whole job.',
  'Rules:',
  '1. Do not start or fork sub-agents; do the work yourself.',
  '2. Do not converse, ask questions or suggest next steps; nobody will answer. Act.',
  '3. Use your tools directly, and read files before changing them.',
  '4. If you modify files, commit your changes before reporting.',
  '5. Keep your report under 500 words.',
  '6. Start your report with "Scope:" and use these lines:',
  '   Scope: the directive in one line',
  '   Result: what you found or did',
  '   Key files: the files that matter',
  '   Files changed: paths with the commit hash, or none',
  '   Issues: problems or open questions, or none',
  'The directive is the text after this block.',
].join('\n');

/** The newest fork rules; an opening records the version it was written with (`OpeningOptions.rules`). */
export const FORK_RULES_VERSION = 2;

/** Where a worktree fork works, and where its parent did. */
export interface WorktreePaths {
  parentRoot: string;
  worktreeRoot: string;
}

function worktreeNotice(w: WorktreePaths): string {
  return (
    `You work in your own git worktree at ${w.worktreeRoot}. Paths in the inherited conversation point at the parent's ` +
    `directory, ${w.parentRoot}: translate them to ${w.worktreeRoot}, and re-read files there before you edit them.`
  );
}

export interface OpeningOptions {
  worktree?: WorktreePaths;
  /** Which worker rules the opening carries: 2 (the seed's), or absent for the first rules (recorded runs). */
  rules?: typeof FORK_RULES_VERSION;
}

/** The text block holding the boilerplate and the child directive. */
export function directiveText(directive: string, opts: OpeningOptions = {}): string {
  const notice = opts.worktree ? `\n${worktreeNotice(opts.worktree)}` : '';
  const rules = opts.rules === FORK_RULES_VERSION ? WORKER_RULES_2 : WORKER_RULES_1;
  return `<${FORK_TAG}>\n${rules}${notice}\n</${FORK_TAG}>\n${directive}`;
}

/** True when a message carries fork boilerplate (a fork child sees this in its own history). */
export function hasForkTag(message: MessageParam): boolean {
  return message.role === 'user' && blocksOf(message).some((b) => b.type === 'text' && b.text.includes(`<${FORK_TAG}>`));
}

/** Where the part shared by all siblings ends: the last block every sibling has in common. */
export interface BlockPosition {
  messageIndex: number;
  blockIndex: number;
}

export interface ForkOpening {
  /** The fork's whole starting conversation. */
  messages: MessageParam[];
  /** How many leading messages are the parent's, unchanged. */
  inheritedCount: number;
  /** Last block shared by every sibling (absent when the parent history is empty). */
  sharedPrefixEnd?: BlockPosition;
}

/**
 * The three parent-history shapes:
 * - ends with an assistant turn with tool calls → that turn unchanged, then one user message
 *   with a placeholder result per call and the directive;
 * - ends with an assistant turn without tool calls → a user message with the directive;
 * - ends with a user turn → the directive is appended to it (no two user turns in a row,
 *   nothing dropped).
 */
export function buildForkOpening(history: MessageParam[], directive: string, opts: OpeningOptions = {}): ForkOpening {
  const directiveBlock: TextBlock = { type: 'text', text: directiveText(directive, opts) };
  const last = history[history.length - 1];
  if (!last) return { messages: [{ role: 'user', content: [directiveBlock] }], inheritedCount: 0 };

  if (last.role === 'assistant') {
    const uses = toolUsesOf(last);
    const placeholders: ToolResultBlock[] = uses.map((u) => ({
      type: 'tool_result',
      tool_use_id: u.id,
      content: [{ type: 'text', text: PLACEHOLDER_RESULT }],
    }));
    const opening: MessageParam = { role: 'user', content: [...placeholders, directiveBlock] };
    const sharedPrefixEnd =
      placeholders.length > 0
        ? { messageIndex: history.length, blockIndex: placeholders.length - 1 }
        : { messageIndex: history.length - 1, blockIndex: blocksOf(last).length - 1 };
    return { messages: [...history, opening], inheritedCount: history.length, sharedPrefixEnd };
  }

  const lastBlocks: ContentBlock[] = blocksOf(last);
  const merged: MessageParam = { ...last, content: [...lastBlocks, directiveBlock] };
  return {
    messages: [...history.slice(0, -1), merged],
    inheritedCount: history.length - 1,
    sharedPrefixEnd: { messageIndex: history.length - 1, blockIndex: lastBlocks.length - 1 },
  };
}

/** What a by-reference fork knows of the prefix's end: no content, only its shape. */
export interface PrefixShape {
  /** Messages in the prefix. */
  count: number;
  lastRole?: 'user' | 'assistant';
  pendingToolUseIds: string[];
}

/**
 * What a by-reference fork's opening is made of, so the model activity can build the same
 * bytes itself instead of asking the workflow for them (ModelCallInput.openingRecipe).
 */
export interface OpeningRecipe {
  shape: PrefixShape;
  directive: string;
  worktree?: WorktreePaths;
  rules?: typeof FORK_RULES_VERSION;
}

export function openingFromRecipe(recipe: OpeningRecipe): MessageParam[] {
  return buildForkOpeningAfter(recipe.shape, recipe.directive, { ...(recipe.worktree ? { worktree: recipe.worktree } : {}), ...(recipe.rules ? { rules: recipe.rules } : {}) }).messages;
}

/**
 * The opening of a fork whose prefix is held by reference: the same three shapes as
 * `buildForkOpening`, expressed without the prefix's content. A user-last prefix gets the
 * directive as a separate user message, which the request builder merges into that turn
 * (`mergeConsecutiveTurns`), giving the same bytes as the inline merge.
 */
export function buildForkOpeningAfter(shape: PrefixShape, directive: string, opts: OpeningOptions = {}): { messages: MessageParam[]; sharedPrefixEnd?: BlockPosition } {
  const directiveBlock: TextBlock = { type: 'text', text: directiveText(directive, opts) };
  if (shape.count === 0 || !shape.lastRole) return { messages: [{ role: 'user', content: [directiveBlock] }] };
  if (shape.lastRole === 'assistant' && shape.pendingToolUseIds.length > 0) {
    const placeholders: ToolResultBlock[] = shape.pendingToolUseIds.map((id) => ({
      type: 'tool_result',
      tool_use_id: id,
      content: [{ type: 'text', text: PLACEHOLDER_RESULT }],
    }));
    return {
      messages: [{ role: 'user', content: [...placeholders, directiveBlock] }],
      sharedPrefixEnd: { messageIndex: shape.count, blockIndex: placeholders.length - 1 },
    };
  }
  return { messages: [{ role: 'user', content: [directiveBlock] }], sharedPrefixEnd: { messageIndex: shape.count - 1, blockIndex: -1 } };
}
