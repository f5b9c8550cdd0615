/**
 * From a validated fork input to the fork's request context and opening conversation:
 * the parent snapshot when there is one (never overridden: that would break the cache),
 * the fork's own system prompt and tools when there is not.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { MessageParam } from '../../shared/anthropic';
import { cacheKeyHash } from '../../shared/cache-key';
import { DEFAULTS } from '../../shared/constants';
import type { ForkInput } from '../../shared/fork-input';
import { buildForkOpening, type BlockPosition } from '../../shared/fork-messages';
import { hashJson } from '../../shared/hash';
import type { RequestContext } from '../../shared/messages';
import { DEFAULT_SYSTEM_PROMPT } from '../../shared/prompts';
import { READ_ONLY_TOOLS, toolDefinition, toolInputSchemas, type BuiltinToolName } from '../../shared/tools/schemas';

export interface ForkSetup {
  context: RequestContext;
  contextKey: string;
  opening: MessageParam[];
  sharedPrefixEnd?: BlockPosition;
  usedParentSnapshot: boolean;
}

/** A fork may not change what the cache is keyed on; say so instead of silently changing it. */
function rejectCacheUnsafeOverrides(input: ForkInput): void {
  const parent = input.parent;
  if (!parent) return;
  const changed: string[] = [];
  if (input.model !== undefined && input.model !== parent.model) changed.push(`model (${parent.model} → ${input.model})`);
  if (input.tools !== undefined) changed.push('tools');
  if (input.system !== undefined) changed.push('system');
  if (input.thinking !== undefined && hashJson(input.thinking) !== hashJson(parent.thinking ?? null)) changed.push('thinking');
  if (changed.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `A fork inherits its parent's ${changed.join(', ')}: overriding them would break the prompt cache. ` +
        'Remove the override, or start a fresh agent without a parent snapshot.',
      'CacheUnsafeOverride',
    );
  }
}

function defaultTools(input: ForkInput): BuiltinToolName[] {
  const all = Object.keys(toolInputSchemas) as BuiltinToolName[];
  return input.toolFilter === 'readOnly' ? [...READ_ONLY_TOOLS] : all;
}

export function setUpFork(input: ForkInput): ForkSetup {
  rejectCacheUnsafeOverrides(input);
  const parent = input.parent;
  const system = parent ? parent.system : (input.system ?? DEFAULT_SYSTEM_PROMPT);
  const tools = parent ? parent.tools : (input.tools ?? defaultTools(input).map(toolDefinition));
  const model = parent ? parent.model : (input.model ?? DEFAULTS.model);
  const thinking = parent ? parent.thinking : input.thinking;
  const context: RequestContext = {
    model,
    system,
    tools,
    maxTokens: input.maxOutputTokens ?? parent?.maxTokens ?? DEFAULTS.maxOutputTokens,
    cacheKeyHash: cacheKeyHash({ system, tools, model, thinking }),
  };
  if (thinking) context.thinking = thinking;
  if (parent?.toolChoice) context.toolChoice = parent.toolChoice;

  const opening = buildForkOpening(parent?.messages ?? [], input.prompt);
  return {
    context,
    contextKey: hashJson(context),
    opening: opening.messages,
    sharedPrefixEnd: opening.sharedPrefixEnd,
    usedParentSnapshot: parent !== undefined,
  };
}
