/**
 * Which model a spawned agent asks for in a tree without a provider catalogue, read the same
 * way where the launch is checked (agent-launch.ts) and where the child's input is built
 * (child-input.ts), so the model the allowlist passed is the model that runs:
 * - the call's `model`, else its definition's, else its caller's (seed 001's precedence);
 * - a Claude Code alias (`sonnet`, `opus`, `haiku`) means the built-in table's id on Anthropic
 *   (src/shared/agent-provider.ts `ANTHROPIC_MODEL_ALIASES`), under {@link BUILTIN_ALIASES_PATCH}.
 * Workflow code: the patches keep recorded runs on the path they took.
 */
import { patched } from '@temporalio/workflow';
import { agentProvider, builtinAliasModel, definitionModel, isClaudeCodeAlias } from '../../shared/agent-provider';
import type { AgentToolInput } from '../../shared/agent-tools';
import { INHERIT_MODEL, resolveAgentModel, type AgentDefinition } from '../../shared/agents';
import type { ModelSource } from '../../shared/model-allowlist';
import type { SubAgentsConfig } from '../../shared/tree-input';
import type { ForkAgent } from './agent';

/**
 * Before this patch a definition's Claude Code model alias (kept by the loader before it was
 * reported, or given inline before inline ones were refused; a continued tree may still hold
 * one) was asked for as written. Asked only for such a definition.
 */
export const DEFINITION_ALIAS_PATCH = 'forkflow-definition-model-alias-1';

/**
 * Before this patch, in a tree without a catalogue, a call's alias was sent to the provider as
 * written and a definition's alias ran on its caller's model; now both mean the built-in
 * table's id on Anthropic. Asked only when an alias meets a tree on Anthropic without a catalogue.
 */
export const BUILTIN_ALIASES_PATCH = 'forkflow-builtin-model-aliases-1';

/** The model a named agent's definition asks for as this tree reads it (definitionModel), for runs under the patch. */
export function definedModel(definition: AgentDefinition | undefined, entry?: { aliases: Record<string, string> }): string | undefined {
  if (isClaudeCodeAlias(definition?.model) && !patched(DEFINITION_ALIAS_PATCH)) return definition?.model;
  return definitionModel(definition, entry);
}

/**
 * The call's and the definition's model in a tree without a catalogue: an alias is the built-in
 * table's id where the caller runs on Anthropic (under the patch), anything else as it was read.
 */
export function uncataloguedModels(agent: ForkAgent, config: SubAgentsConfig, input: Pick<AgentToolInput, 'model'>, definition: AgentDefinition | undefined): { call: string | undefined; defined: string | undefined } {
  const provider = agentProvider(agent.input, config);
  const call = builtinAliasModel(input.model, provider);
  const defined = builtinAliasModel(definition?.model, provider);
  const mapped = (call !== undefined || defined !== undefined) && patched(BUILTIN_ALIASES_PATCH);
  return { call: (mapped ? call : undefined) ?? input.model, defined: (mapped ? defined : undefined) ?? definedModel(definition) };
}

const named = (model: string | undefined): string | undefined => {
  const m = model?.trim();
  return m && m !== INHERIT_MODEL ? m : undefined;
};

/** The model a spawned child runs on without a catalogue (the call's, else the definition's, else its caller's). */
export function uncataloguedModel(agent: ForkAgent, config: SubAgentsConfig, input: Pick<AgentToolInput, 'model'>, definition: AgentDefinition | undefined): string {
  const { call, defined } = uncataloguedModels(agent, config, input, definition);
  return resolveAgentModel({ callModel: call, definition: { model: defined }, parentModel: agent.summary.model });
}

/** The model the child will run on and where that choice came from (for the allowlist's answer). */
export function childModel(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, launch: { kind: 'fork' } | { kind: 'skill' } | { kind: 'spawn'; definition?: AgentDefinition }): { model: string; source: ModelSource } {
  const own = agent.summary.model;
  if (launch.kind !== 'spawn') return { model: own, source: { kind: 'inherited' } };
  const { call, defined } = uncataloguedModels(agent, config, input, launch.definition);
  const model = resolveAgentModel({ callModel: call, definition: { model: defined }, parentModel: own });
  if (named(call)) return { model, source: { kind: 'call' } };
  if (launch.definition && named(defined)) return { model, source: { kind: 'definition', agent: launch.definition.name } };
  return { model, source: { kind: 'inherited' } };
}
