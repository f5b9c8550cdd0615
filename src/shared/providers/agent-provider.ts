/**
 * Which provider and model a sub-agent runs on, when its tree has a provider catalogue
 * (`subAgents.providers`): the providers its agents may use, each with its allowed models
 * (the first is the default) and its aliases. A fork always stays on its parent's provider
 * and model (its cache is there); a spawned agent may name another provider, and its model
 * resolves on that provider: an alias maps per provider, `inherit` or nothing means the
 * parent's model on the parent's provider and the provider's first model elsewhere.
 *
 * Pure and workflow-safe: the workflow runs {@link childProvider} before anything starts,
 * so every refusal is a tool error and nothing is started.
 */
import { z } from 'zod';
import { modelIdSchema } from '../agents/agents';
import { DEFAULT_PROVIDER, providerNameSchema } from './model-allowlist';
import { failoverSettingsSchema, priceSchema, type ProvidersConfig } from './providers';
import type { Price } from './pricing';
import { schemaOnce } from '../base/schema-once';

/**
 * `{ name: { models, aliases, fallbacks?, failover? } }`: what a tree's agents may run on, and
 * where a provider's calls go when it is overloaded or out (src/shared/providers/failover.ts). Each
 * fallback names a provider of the catalogue and one of its models.
 */
export const providerCatalogueSchema = schemaOnce('providers/agent-provider#providerCatalogueSchema', () => z.record(
  providerNameSchema,
  z.strictObject({
    models: z.array(modelIdSchema).min(1),
    aliases: z.record(z.string().min(1).max(64), modelIdSchema).default({}),
    fallbacks: z.array(z.strictObject({ provider: providerNameSchema, model: modelIdSchema, for: z.array(modelIdSchema).min(1).optional() })).max(8).optional(),
    failover: failoverSettingsSchema.optional(),
    pricing: z.record(modelIdSchema, priceSchema).optional(),
  }).refine((p) => Object.values(p.aliases).every((m) => p.models.includes(m)), { message: 'every alias must map to a model listed in models', path: ['aliases'] }),
).superRefine((catalogue, ctx) => {
  for (const [name, entry] of Object.entries(catalogue)) {
    (entry.fallbacks ?? []).forEach((f, i) => {
      const target = catalogue[f.provider];
      if (!target) ctx.addIssue({ code: 'custom', message: `fallback provider "${f.provider}" is not in the catalogue`, path: [name, 'fallbacks', i] });
      else if (!target.models.includes(f.model)) ctx.addIssue({ code: 'custom', message: `fallback model "${f.model}" is not listed for provider "${f.provider}"`, path: [name, 'fallbacks', i] });
    });
  }
}));
export type ProviderCatalogue = z.output<typeof providerCatalogueSchema>;

/**
 * The catalogue of a worker's provider configuration (entries that list models), for a
 * client building a tree's input from the same FORKFLOW_PROVIDERS the workers read.
 */
export function catalogueOf(config: ProvidersConfig): ProviderCatalogue {
  const listed = config.filter((p) => p.models.length > 0);
  const firstModel = (name: string) => listed.find((p) => p.name === name)?.models[0];
  return Object.fromEntries(listed.map((p) => {
    // Fallbacks to providers that list no models are not offered to trees (they have no catalogue entry).
    const fallbacks = (p.fallbacks ?? []).flatMap((f) => {
      const model = f.model ?? firstModel(f.provider);
      return model && firstModel(f.provider) ? [{ provider: f.provider, model, ...(f.for ? { for: f.for } : {}) }] : [];
    });
    return [p.name, { models: p.models, aliases: p.aliases, ...(fallbacks.length ? { fallbacks } : {}), ...(p.failover ? { failover: p.failover } : {}), ...(p.pricing ? { pricing: p.pricing } : {}) }];
  }));
}

/** The models per provider, as the allowlist the Agent tool shows. */
export function allowlistOf(catalogue: ProviderCatalogue): Record<string, string[]> {
  return Object.fromEntries(Object.entries(catalogue).map(([name, p]) => [name, p.models]));
}

export type ChildChoice = { ok: true; provider: string; model: string } | { ok: false; error: string };

const INHERIT = 'inherit';

/**
 * The provider and model of a child, or the refusal to give the model.
 *
 * @example childProvider({ catalogue, parent: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, fork: false, provider: 'openai', model: 'mini' }) // { ok: true, provider: 'openai', model: 'gpt-4.1-mini' }
 */
export function childProvider(args: {
  catalogue: ProviderCatalogue;
  parent: { provider: string; model: string };
  /** A fork (or a skill, which runs as one). */
  fork: boolean;
  /** The Agent call's `provider`. */
  provider?: string;
  /** The model asked for: the call's, else a named agent's definition's. */
  model?: string;
  /** Where `model` came from, for the message. */
  modelFrom?: string;
}): ChildChoice {
  const { catalogue, parent, fork } = args;
  const names = Object.keys(catalogue);
  if (fork) {
    if (args.provider !== undefined && args.provider !== parent.provider) {
      return { ok: false, error: `A fork always runs on your provider (${parent.provider}) and model (${parent.model}), where your cache is: omit provider, or pick a subagent_type to start a new agent on ${args.provider}.` };
    }
    return { ok: true, provider: parent.provider, model: parent.model };
  }
  const provider = args.provider ?? parent.provider;
  const entry = catalogue[provider];
  if (!entry) return { ok: false, error: `There is no provider "${provider}" for this agent tree. Providers: ${names.join(', ')}.` };
  const asked = args.model?.trim();
  if (!asked || asked === INHERIT) {
    if (provider === parent.provider) return { ok: true, provider, model: parent.model };
    return { ok: true, provider, model: entry.models[0] as string };
  }
  const model = entry.aliases[asked] ?? asked;
  if (entry.models.includes(model)) return { ok: true, provider, model };
  const elsewhere = names.filter((n) => n !== provider && (catalogue[n]!.models.includes(asked) || asked in catalogue[n]!.aliases));
  const where = elsewhere.length ? ` It belongs to ${elsewhere.join(', ')}: pass provider "${elsewhere[0]}" with it, or pick a model of ${provider}.` : '';
  const aliases = Object.keys(entry.aliases);
  const from = args.modelFrom ? `${args.modelFrom} asks for model` : 'Model';
  return { ok: false, error: `${from} "${asked}", which is not available on provider "${provider}".${where} Allowed on ${provider}: ${entry.models.join(', ')}${aliases.length ? ` (aliases: ${aliases.join(', ')})` : ''}.` };
}

/** The provider an agent runs on: its own `provider`, else its tree's (`subAgents.provider`). */
export function agentProvider(input: { provider?: string }, config: { provider: string }): string {
  return input.provider ?? config.provider;
}

/**
 * A model's price on a provider, as the tree's catalogue configures it (`pricing`); undefined
 * when it does not (then src/shared/providers/pricing.ts's table applies).
 */
export function priceOf(catalogue: ProviderCatalogue | undefined, provider: string, model: string): Price | undefined {
  return catalogue?.[provider]?.pricing?.[model];
}

/** Claude Code's model aliases (seed 001), which agent files often name. */
export const CLAUDE_CODE_ALIASES: readonly string[] = ['sonnet', 'opus', 'haiku'];

/**
 * What Claude Code's aliases mean on Anthropic's own API when a tree has no provider
 * catalogue (seed 001 S1-08: `model: sonnet` in an Agent call or an agent file): the current
 * model of each family. The table moves with forkflow's releases; a tree that must stay on
 * one id writes the id, or maps the alias in its catalogue (`subAgents.providers`), which wins.
 */
export const ANTHROPIC_MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: 'claude-sonnet-5-5',
  opus: 'claude-opus-5-5',
  haiku: 'claude-haiku-4-5',
};

/**
 * The model id a Claude Code alias stands for on `provider` without a catalogue: the built-in
 * table's on Anthropic (the worker's own client, `anthropic`), undefined elsewhere (another provider's models are not Claude's
 * families) and for anything that is not an alias.
 *
 * @example builtinAliasModel('Haiku', 'anthropic') // 'claude-haiku-4-5'
 */
export function builtinAliasModel(model: unknown, provider: string): string | undefined {
  if (provider !== DEFAULT_PROVIDER || !isClaudeCodeAlias(model)) return undefined;
  return ANTHROPIC_MODEL_ALIASES[model.trim().toLowerCase()];
}

/** Whether `model` is one of Claude Code's aliases (any case). */
export function isClaudeCodeAlias(model: unknown): model is string {
  return typeof model === 'string' && CLAUDE_CODE_ALIASES.includes(model.trim().toLowerCase());
}

/**
 * The model a named agent's definition asks for, as its tree reads it. A Claude Code alias
 * (`model: sonnet`) goes to the tree's provider catalogue when it has one (`entry`: the
 * agent's provider's; `childProvider` maps the alias there, or refuses the spawn by name when
 * that provider does not define it); a tree without a catalogue has no mapping, so the alias
 * asks for nothing and the agent runs on its caller's model, as the load report (`forkflow
 * agents --dir`) says. Any other value is returned as written.
 */
export function definitionModel(definition: { model?: string } | undefined, entry?: { aliases: Record<string, string> }): string | undefined {
  const model = definition?.model;
  if (!isClaudeCodeAlias(model)) return model;
  if (!entry) return undefined;
  const written = model.trim();
  return Object.hasOwn(entry.aliases, written) ? written : written.toLowerCase();
}
