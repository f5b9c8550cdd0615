/**
 * From a validated fork input to the fork's request context and opening conversation:
 * - a parent snapshot inline (the prefix is recorded once, in this fork's input),
 * - a parent by reference (zero-copy: the prefix stays in the run that recorded it), which may
 *   be a point of the parent's past (src/shared/prefix/time-travel.ts) and may be a replay (no opening:
 *   the fork goes on as the parent would have),
 * - or no parent yet (the fork's own system prompt and tools).
 * A fork never overrides what the cache is keyed on — that is an error, not a silent change —
 * unless it says it is a counterfactual fork: then it holds its own context (the parent's with
 * the overrides) and records which parts changed.
 */
import { withMemorySection } from '../../shared/agents/agent-memory';
import { allowlistOf } from '../../shared/providers/agent-provider';
import { permittedAgents } from '../../shared/tools/agent-access';
import type { MessageParam, ToolDefinition } from '../../shared/messages-api/anthropic';
import { DEFAULTS, FORK_QUERY_SOURCE } from '../../shared/wire/constants';
import { controlOptions, subAgentToolDefinitions } from '../../shared/tree/agent-tools';
import { FAILURE, failure } from '../../shared/wire/failures';
import type { ForkInput } from '../../shared/wire/fork-input';
import type { CacheSafeParams } from '../../shared/wire/cache-safe-params';
import { buildForkOpening, buildForkOpeningAfter, type BlockPosition, type OpeningOptions, type OpeningRecipe } from '../../shared/prefix/fork-messages';
import { chainDigest, EMPTY_DIGEST, hashJson } from '../../shared/base/hash';
import type { HeldConversation } from '../../shared/tree/tree-input';
import type { RequestContext } from '../../shared/wire/messages';
import type { ContextSummary, PrefixRef, RequestHashes } from '../../shared/prefix/prefix';
import { DEFAULT_SYSTEM_PROMPT } from '../../shared/agents/prompts';
import { requestContextOf, snapshotHashes } from '../../shared/prefix/snapshot';
import { contextSummaryOf } from '../conversation-queries';
import { renderQueuedMessage } from './inbox';
import { READ_ONLY_TOOLS, toolDefinition, toolInputSchemas, type BuiltinToolName } from '../../shared/tools/schemas';
import { textOnlyRead } from './media-rules';
import { cacheKeyComponents } from '../../shared/prefix/cache-key';
import { changedParts, resumable, type CounterfactualPart } from '../../shared/prefix/time-travel';
import { blocksOf } from '../../shared/messages-api/anthropic';

/** What an agent brings besides its input: its MCP servers' tools, and context its SubagentStart hooks add. */
export interface SetupExtras {
  /** Tool definitions of its MCP servers, as recorded at its start (offered when it has no parent snapshot). */
  mcpTools?: ToolDefinition[];
  /** Added to its opening message. */
  startContext?: string;
  /** The parent's request context, read beforehand for a counterfactual fork by reference. */
  parentContext?: RequestContext;
  /** A named agent's memory (src/shared/agents/agent-memory.ts), appended to its own system prompt. */
  memorySection?: string;
}

export interface ForkSetup {
  /** The full context when this run holds it (inline or no parent). */
  context?: RequestContext;
  summary: ContextSummary;
  /** Global index of the first message this run holds (the prefix length when by reference). */
  base: number;
  prefixRef?: PrefixRef;
  opening: MessageParam[];
  sharedPrefixEnd?: BlockPosition;
  /**
   * Global index of the agent's first own message, after what a fork inherited (its output
   * file starts there). Absent in a continuing run: the previous run's is carried.
   */
  ownFrom?: number;
  /** How `opening` was built, when the model activity can build it again (a by-reference fork). */
  recipe?: OpeningRecipe;
  usedParentSnapshot: boolean;
  /** The parent request's component hashes and this fork's, for cache-break diagnosis. */
  parentHashes?: RequestHashes;
  forkHashes?: RequestHashes;
  /** A counterfactual fork: the parts of the parent's request it changed. */
  changed?: CounterfactualPart[];
}

/** A counterfactual fork's own context: the parent's, with the input's overrides. */
function counterfactualContext(input: ForkInput, parent: Omit<RequestContext, 'cacheKeyHash'>, maxTokens: number): RequestContext {
  const thinking = input.thinking ?? parent.thinking;
  const toolChoice = parent.toolChoice as CacheSafeParams['toolChoice'];
  return requestContextOf({ system: input.system ?? parent.system, tools: input.tools ?? parent.tools, model: input.model ?? parent.model, messages: [], ...(thinking ? { thinking } : {}), ...(toolChoice ? { toolChoice } : {}) }, maxTokens);
}

function rejectCacheUnsafeOverrides(input: ForkInput, parentModel: string | undefined, parentThinking: unknown): void {
  if (parentModel === undefined) return;
  const changed: string[] = [];
  if (input.model !== undefined && input.model !== parentModel) changed.push(`model (${parentModel} → ${input.model})`);
  if (input.tools !== undefined) changed.push('tools');
  if (input.system !== undefined) changed.push('system');
  if (input.thinking !== undefined && hashJson(input.thinking) !== hashJson(parentThinking ?? null)) changed.push('thinking');
  if (changed.length > 0) {
    throw failure(
      FAILURE.cacheUnsafeOverride,
      `A fork inherits its parent's ${changed.join(', ')}: overriding them would break the prompt cache. ` +
        'Remove the override, or start a fresh agent without a parent.',
    );
  }
}

function defaultTools(input: ForkInput): ToolDefinition[] {
  const all = Object.keys(toolInputSchemas) as BuiltinToolName[];
  const names = input.toolFilter === 'readOnly' ? [...READ_ONLY_TOOLS, 'Bash' as const] : all;
  const textRead = textOnlyRead(names);
  const builtin = names.map((name) => toolDefinition(name, { textRead }));
  const sub = input.subAgents?.enabled ? subAgentToolDefinitions({ forkGate: input.subAgents.forkGate, agents: permittedAgents(input.subAgents), modelAllowlist: input.subAgents.modelAllowlist, provider: input.subAgents.provider, ...(input.subAgents.providers ? { providers: allowlistOf(input.subAgents.providers) } : {}), ...(input.subAgents.teams ? { teams: true } : {}), ...controlOptions(input.subAgents), ...(input.backgroundTasks === false ? { backgroundTasks: false as const } : {}) }) : [];
  return [...builtin, ...sub];
}

/**
 * A run that continues an agent: its conversation so far by reference (the previous run),
 * plus the message that resumes it, if any. No opening, no boilerplate: the agent goes on.
 */
function continuing(input: ForkInput, continuation: NonNullable<ForkInput['continuation']>): ForkSetup {
  const { ref, message, messages, held } = continuation;
  const opening: MessageParam[] = message ? [{ role: 'user', content: [{ type: 'text', text: renderQueuedMessage(message) }] }] : (messages ?? []);
  if (held) return holding(input, ref, held, opening);
  return {
    summary: input.maxOutputTokens ? { ...ref.context, maxTokens: input.maxOutputTokens } : ref.context,
    base: ref.count,
    prefixRef: ref,
    opening,
    usedParentSnapshot: false,
  };
}

/** A continuing run that holds the whole conversation itself (it moved to a new build): checked against the reference's digest. */
function holding(input: ForkInput, ref: PrefixRef, held: HeldConversation, after: MessageParam[]): ForkSetup {
  let digest = EMPTY_DIGEST;
  for (const m of held.messages) digest = chainDigest(digest, m);
  if (held.messages.length !== ref.count || digest !== ref.digest) {
    throw failure(FAILURE.invalidForkInput, `The conversation carried to this run has ${held.messages.length} messages that do not match the previous run's ${ref.count} (digest ${ref.digest}).`);
  }
  const maxTokens = input.maxOutputTokens ?? held.context.maxTokens;
  const context = requestContextOf({ ...held.context, messages: [] }, maxTokens);
  return { context, summary: contextSummaryOf(context), base: 0, opening: [...held.messages, ...after], usedParentSnapshot: false };
}

/**
 * `parentContext`: the parent's full request context, which a counterfactual fork reads (by an
 * activity, before set-up) to build its own.
 */
function byReference(input: ForkInput, ref: PrefixRef, options: OpeningOptions, parentContext?: RequestContext): ForkSetup {
  if (!input.counterfactual) rejectCacheUnsafeOverrides(input, ref.context.model, input.thinking);
  const own = input.counterfactual ? ownContext(input, ref, parentContext) : undefined;
  const opening = input.replay ? replayOpening(ref) : buildForkOpeningAfter(ref, input.prompt, options);
  return {
    ...(own ? { context: own.context } : {}),
    summary: own ? contextSummaryOf(own.context) : input.maxOutputTokens ? { ...ref.context, maxTokens: input.maxOutputTokens } : ref.context,
    base: ref.count,
    prefixRef: ref,
    opening: opening.messages,
    sharedPrefixEnd: opening.sharedPrefixEnd,
    ownFrom: ref.count,
    ...(input.replay
      ? {}
      : {
          recipe: {
            shape: { count: ref.count, ...(ref.lastRole ? { lastRole: ref.lastRole } : {}), pendingToolUseIds: ref.pendingToolUseIds },
            directive: input.prompt,
            ...(options.worktree ? { worktree: options.worktree } : {}),
            ...(options.rules ? { rules: options.rules } : {}),
          },
        }),
    usedParentSnapshot: true,
    // The prefix is the parent's own messages (proven by digest); the context the fork really
    // sends is measured by the model activity and replaces these components (cache-break.ts).
    parentHashes: own?.parentHashes ?? ref.requestHashes,
    forkHashes: own?.forkHashes ?? ref.requestHashes,
    ...(own ? { changed: own.changed } : {}),
  };
}

/** A replay adds nothing: it needs a point from which the parent itself went on (a user turn last). */
function replayOpening(ref: PrefixRef): { messages: MessageParam[]; sharedPrefixEnd?: BlockPosition } {
  if (!resumable(ref)) {
    throw failure(FAILURE.invalidForkInput, `A replay goes on from a point where the agent was about to call the model; this one ends with ${ref.lastRole === 'assistant' ? "the agent's own reply" : 'nothing'}. Fork with a directive instead, or replay from an earlier turn.`);
  }
  return { messages: [] };
}

function ownContext(input: ForkInput, ref: PrefixRef, parent: RequestContext | undefined): { context: RequestContext; parentHashes: RequestHashes; forkHashes: RequestHashes; changed: CounterfactualPart[] } {
  if (!parent) throw failure(FAILURE.invalidForkInput, "A counterfactual fork needs its parent's request context, which was not read.");
  const context = counterfactualContext(input, parent, input.maxOutputTokens ?? ref.context.maxTokens);
  const prefix = ref.requestHashes?.prefix ?? ref.digest;
  const parentParts = cacheKeyComponents(parent);
  const forkParts = cacheKeyComponents(context);
  return { context, parentHashes: { ...parentParts, prefix }, forkHashes: { ...forkParts, prefix }, changed: changedParts(parentParts, forkParts) };
}

/**
 * An agent's own tools (no parent snapshot): its given or default tools, then its routes'
 * definitions and its MCP servers' tools, each name once (the first wins). Unchanged when it
 * has neither.
 */
function ownTools(input: ForkInput, extras: SetupExtras): ToolDefinition[] {
  const base = input.tools ?? defaultTools(input);
  const more = [...(input.routes ?? []).flatMap((r) => r.definitions ?? []), ...(extras.mcpTools ?? [])];
  if (more.length === 0) return base;
  const seen = new Set(base.map((t) => t.name));
  return [...base, ...more.filter((t) => !seen.has(t.name) && seen.add(t.name))];
}

/** The setup with `context` added to its opening's last message (its recipe dropped: the opening is no longer the recipe's). */
function withStartContext(setup: ForkSetup, context: string | undefined): ForkSetup {
  if (context === undefined || setup.opening.length === 0) return setup;
  const opening = [...setup.opening];
  const last = opening[opening.length - 1]!;
  opening[opening.length - 1] = { ...last, content: [...blocksOf(last), { type: 'text', text: `<subagent-start-context>\n${context}\n</subagent-start-context>` }] };
  const { recipe: _recipe, ...rest } = setup;
  return { ...rest, opening };
}

/**
 * A fresh agent's first turn: its prompt; with `promptMessages` (seed 000's prompt_messages)
 * those messages, the prompt ending the last user turn or following as one.
 */
function plainOpening(input: ForkInput): MessageParam[] {
  const given = input.promptMessages;
  if (!given) return [{ role: 'user', content: input.prompt }];
  const last = given[given.length - 1]!;
  const prompt = { type: 'text' as const, text: input.prompt };
  return last.role === 'user' ? [...given.slice(0, -1), { role: 'user', content: [...blocksOf(last), prompt] }] : [...given, { role: 'user', content: [prompt] }];
}

/** `worktree`: where a worktree fork works (for the notice in its opening). */
export function setUpFork(input: ForkInput, options: OpeningOptions = {}, extras: SetupExtras = {}): ForkSetup {
  return withStartContext(setUp(input, options, extras), input.continuation ? undefined : extras.startContext);
}

function setUp(input: ForkInput, options: OpeningOptions, extras: SetupExtras): ForkSetup {
  if (input.continuation) return continuing(input, input.continuation);
  if (input.parentRef) return byReference(input, input.parentRef, options, extras.parentContext);
  const parent = input.parent;
  const counterfactual = input.counterfactual === true && parent !== undefined;
  if (!counterfactual) rejectCacheUnsafeOverrides(input, parent?.model, parent?.thinking);
  const maxTokens = input.maxOutputTokens ?? parent?.maxTokens ?? DEFAULTS.maxOutputTokens;
  const system = input.system ?? DEFAULT_SYSTEM_PROMPT;
  const own = { system: extras.memorySection ? withMemorySection(system, extras.memorySection) : system, tools: ownTools(input, extras), model: input.model ?? DEFAULTS.model, thinking: input.thinking };
  const context: RequestContext = counterfactual ? counterfactualContext(input, requestContextOf(parent, maxTokens), maxTokens) : requestContextOf(parent ?? { ...own, messages: [] }, maxTokens);
  const changed = counterfactual ? changedParts(cacheKeyComponents(parent), cacheKeyComponents(context)) : undefined;

  // A spawned agent (not a fork) starts from its prompt alone, without the fork boilerplate.
  const plain = !parent && input.querySource !== FORK_QUERY_SOURCE;
  const opening = plain ? { messages: plainOpening(input), inheritedCount: 0, sharedPrefixEnd: undefined } : buildForkOpening(parent?.messages ?? [], input.prompt, options);
  return {
    context,
    summary: contextSummaryOf(context),
    base: 0,
    opening: opening.messages,
    sharedPrefixEnd: opening.sharedPrefixEnd,
    ownFrom: opening.inheritedCount,
    usedParentSnapshot: parent !== undefined,
    // What the parent sent (recorded when the snapshot was taken) against what this fork was given.
    parentHashes: parent?.requestHashes,
    forkHashes: parent?.requestHashes ? { ...snapshotHashes(parent), ...(counterfactual ? cacheKeyComponents(context) : {}) } : undefined,
    ...(changed ? { changed } : {}),
  };
}
