/**
 * Seed 002's (Meerkat's) `SubAgentConfig` defaults for spawned agents, each one setting of a
 * tree's `subAgents` away: `spawnProvider` (its `default_provider`), `spawnModel` (its
 * `default_model`, `first-allowed` for "the first model of the provider's allowlist"),
 * `inheritSystemPrompt`, `modelAllowlist: "builtin"` (its hard-coded default allowlist) and
 * `maxConcurrentOps`. Absent, a tree keeps forkflow's defaults, which are seed 001's (Claude
 * Code's): a spawn runs on its caller's provider and model with forkflow's default system
 * prompt, every model is allowed, and no cap spans operation types (docs/seed-differences.md
 * says why). Pure and workflow-safe.
 */
import { z } from 'zod';
import { ANTHROPIC_MODEL_ALIASES, type ProviderCatalogue } from '../providers/agent-provider';
import { modelIdSchema } from '../agents/agents';
import { modelAllowlistSchema, type ModelAllowlist } from '../providers/model-allowlist';
import { schemaOnce } from '../base/schema-once';

/** `spawnModel` value: the first model its provider lists (its catalogue entry's, else the tree's allowlist for it). */
export const FIRST_ALLOWED = 'first-allowed';
/** `modelAllowlist` value: forkflow's built-in list (the Anthropic ids its alias table names). */
export const BUILTIN_ALLOWLIST = 'builtin';

/** The built-in allowlist: the ids forkflow's alias table maps `sonnet`, `opus` and `haiku` to, on Anthropic. */
export function builtinModelAllowlist(): ModelAllowlist {
  return { anthropic: [...new Set(Object.values(ANTHROPIC_MODEL_ALIASES))] };
}

/** A tree's `modelAllowlist` as written: per provider, or `"builtin"` (read as {@link builtinModelAllowlist}). */
export const modelAllowlistInputSchema = schemaOnce('tree/spawn-defaults#modelAllowlistInputSchema', () =>
  z.union([z.literal(BUILTIN_ALLOWLIST), modelAllowlistSchema]).transform((v): ModelAllowlist => (v === BUILTIN_ALLOWLIST ? builtinModelAllowlist() : v)));

/** `spawnModel` as written: a model id or alias of the spawn's provider, or `first-allowed`. */
export const spawnModelSchema = schemaOnce('tree/spawn-defaults#spawnModelSchema', () => z.union([z.literal(FIRST_ALLOWED), modelIdSchema]));

/** The settings this module reads, as a tree's `subAgents` holds them. */
export interface SpawnDefaults {
  provider: string;
  providers?: ProviderCatalogue;
  modelAllowlist?: ModelAllowlist;
  spawnProvider?: string;
  spawnModel?: string;
}

/**
 * The model a spawn asks for when neither its call nor its definition names one, on
 * `provider` (where it runs): `spawnModel` as written, `first-allowed` resolved to that
 * provider's first listed model; undefined when the tree has no `spawnModel` (its caller's model).
 *
 * @example spawnDefaultModel({ provider: 'anthropic', spawnModel: 'first-allowed', modelAllowlist: { anthropic: ['m1', 'm2'] } }, 'anthropic') // 'm1'
 */
export function spawnDefaultModel(config: SpawnDefaults, provider: string): string | undefined {
  if (config.spawnModel !== FIRST_ALLOWED) return config.spawnModel;
  return config.providers ? config.providers[provider]?.models[0] : config.modelAllowlist?.[provider]?.[0];
}

/** What is wrong with a tree's spawn defaults (each with its path under `subAgents`), so the start is refused by name. */
export function spawnDefaultsProblems(config: SpawnDefaults): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  const where = config.spawnProvider ?? config.provider;
  if (config.spawnProvider !== undefined) {
    if (config.providers && !(config.spawnProvider in config.providers)) {
      out.push({ path: 'spawnProvider', message: `spawnProvider "${config.spawnProvider}" is not one of subAgents.providers (${Object.keys(config.providers).join(', ')})` });
    } else if (!config.providers && config.spawnProvider !== config.provider) {
      out.push({ path: 'spawnProvider', message: `spawnProvider "${config.spawnProvider}" needs subAgents.providers: this tree runs on "${config.provider}" and offers no other` });
    }
  }
  if (config.spawnModel === FIRST_ALLOWED && spawnDefaultModel(config, where) === undefined) {
    out.push({ path: 'spawnModel', message: `spawnModel "${FIRST_ALLOWED}" needs a list of models for provider "${where}": subAgents.providers.${where}.models or subAgents.modelAllowlist.${where}` });
  }
  return out;
}
