/**
 * Which model a spawned agent asks for in a tree without a provider catalogue, read the same
 * way where the launch is checked (agent-launch.ts) and where the child's input is built
 * (child-input.ts), so the model the allowlist passed is the model that runs:
 * - the call's `model`, else its definition's, else its caller's (seed 001's precedence);
 * - a Claude Code alias (`sonnet`, `opus`, `haiku`) means the built-in table's id on Anthropic
 *   (src/shared/providers/agent-provider.ts `ANTHROPIC_MODEL_ALIASES`);
 * - a tree's seed-002 spawn defaults (`spawnProvider`, `spawnModel`: src/shared/tree/spawn-defaults.ts)
 *   fill in what neither the call nor the definition names, with a catalogue or without.
 * Workflow code (deterministic). Its patches guarded no recorded history and were retired
 * (docs/guides/patches.md).
 */
import { agentProvider, builtinAliasModel, definitionModel, isClaudeCodeAlias, type ProviderCatalogue } from '../../shared/providers/agent-provider';
import { spawnDefaultModel } from '../../shared/tree/spawn-defaults';
import { DEFAULT_PROVIDER } from '../../shared/providers/model-allowlist';
import type { AgentToolInput } from '../../shared/tree/agent-tools';
import { INHERIT_MODEL, resolveAgentModel, type AgentDefinition } from '../../shared/agents/agents';
import type { ModelSource } from '../../shared/providers/model-allowlist';
import type { SubAgentsConfig } from '../../shared/tree/tree-input';
import type { ForkAgent } from './agent';

/** The model a named agent's definition asks for as this tree reads it (definitionModel). */
export function definedModel(definition: AgentDefinition | undefined, entry?: { aliases: Record<string, string> }): string | undefined {
  return definitionModel(definition, entry);
}

/**
 * The call's and the definition's model in a tree without a catalogue: an alias is the built-in
 * table's id where the caller runs on Anthropic, anything else as it was read.
 * A spawn whose definition names no model asks for the tree's `spawnModel` (absent: nothing,
 * its caller's model).
 */
export function uncataloguedModels(agent: ForkAgent, config: SubAgentsConfig, input: Pick<AgentToolInput, 'model'>, definition: AgentDefinition | undefined): { call: string | undefined; defined: string | undefined; fromSetting: boolean } {
  const provider = agentProvider(agent.input, config);
  const call = builtinAliasModel(input.model, provider);
  const defined = builtinAliasModel(definition?.model, provider);
  const mapped = call !== undefined || defined !== undefined;
  const own = (mapped ? defined : undefined) ?? definedModel(definition);
  const setting = definition?.model === undefined ? spawnDefaultModel(config, provider) : undefined;
  return { call: (mapped ? call : undefined) ?? input.model, defined: own ?? builtinAliasModel(setting, provider) ?? setting, fromSetting: own === undefined && setting !== undefined };
}

const named = (model: string | undefined): string | undefined => {
  const m = model?.trim();
  return m && m !== INHERIT_MODEL ? m : undefined;
};

/** The model a spawned child runs on without a catalogue (the call's, else the definition's, else the tree's spawnModel, else its caller's). */
export function uncataloguedModel(agent: ForkAgent, config: SubAgentsConfig, input: Pick<AgentToolInput, 'model'>, definition: AgentDefinition | undefined): string {
  const { call, defined } = uncataloguedModels(agent, config, input, definition);
  return resolveAgentModel({ callModel: call, definition: { model: defined }, parentModel: agent.summary.model });
}

/** The model the child will run on and where that choice came from (for the allowlist's answer). */
export function childModel(agent: ForkAgent, config: SubAgentsConfig, input: AgentToolInput, launch: { kind: 'fork' } | { kind: 'skill' } | { kind: 'spawn'; definition?: AgentDefinition }): { model: string; source: ModelSource } {
  const own = agent.summary.model;
  if (launch.kind !== 'spawn') return { model: own, source: { kind: 'inherited' } };
  const { call, defined, fromSetting } = uncataloguedModels(agent, config, input, launch.definition);
  const model = resolveAgentModel({ callModel: call, definition: { model: defined }, parentModel: own });
  if (named(call)) return { model, source: { kind: 'call' } };
  if (fromSetting && named(defined)) return { model, source: { kind: 'setting', name: 'subAgents.spawnModel' } };
  if (launch.definition && named(defined)) return { model, source: { kind: 'definition', agent: launch.definition.name } };
  return { model, source: { kind: 'inherited' } };
}

/**
 * With a catalogue: the provider and model a spawn asks `childProvider` for. The provider is the
 * call's, else the definition's, else the tree's `spawnProvider` (else its caller's); the model
 * the call's, else the definition's (an alias read in that provider's catalogue), else the
 * tree's `spawnModel` for that provider. `modelFrom` names where a model the call did not give came from.
 */
export function cataloguedAsk(agent: ForkAgent, config: SubAgentsConfig & { providers: ProviderCatalogue }, input: Pick<AgentToolInput, 'model' | 'provider'>, definition: AgentDefinition | undefined): { provider?: string; model?: string; modelFrom?: string } {
  const provider = input.provider ?? definition?.provider ?? config.spawnProvider;
  const where = provider ?? agentProvider(agent.input, config);
  const defined = definedModel(definition, config.providers[where] ?? { aliases: {} });
  const setting = definition?.model === undefined ? spawnDefaultModel(config, where) : undefined;
  const model = input.model ?? defined ?? setting;
  const modelFrom = input.model ? undefined : defined ? `Agent type "${definition!.name}"` : setting ? 'The tree\'s subAgents.spawnModel' : undefined;
  return { ...(provider !== undefined ? { provider } : {}), ...(model !== undefined ? { model } : {}), ...(modelFrom ? { modelFrom } : {}) };
}

/** Why a call's Claude Code alias cannot mean a model here: no catalogue maps it and the tree is not on Anthropic. */
export function aliasRefusal(agent: ForkAgent, config: SubAgentsConfig, input: Pick<AgentToolInput, 'model'>, launch: { kind: string }): string | undefined {
  if (launch.kind !== 'spawn' || config.providers || !isClaudeCodeAlias(input.model)) return undefined;
  const provider = agentProvider(agent.input, config);
  if (provider === DEFAULT_PROVIDER) return undefined;
  return `Model "${input.model.trim()}" is a Claude Code alias, which means a model only on Anthropic's own API or through a provider catalogue, and this agent tree runs on "${provider}" with none: pass a model id of ${provider}, or omit model.`;
}

/** Claude Code's built-in agent types, which forkflow does not ship (its one built-in is general-purpose). */
export const CLAUDE_CODE_BUILTIN_AGENTS: readonly string[] = ['Explore', 'Plan', 'statusline-setup', 'output-style-setup'];

/** The sentence that opens the refusal of a call for one of Claude Code's built-in types (empty for any other name). */
export function claudeCodeBuiltinNote(type: string): string {
  if (!CLAUDE_CODE_BUILTIN_AGENTS.includes(type)) return '';
  return `"${type}" is one of Claude Code's built-in agents, which forkflow does not ship: its operator adds an agent file for it (named in lower case, e.g. ${type.toLowerCase()}) to have one. `;
}
