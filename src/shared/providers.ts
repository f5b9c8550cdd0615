/**
 * Providers as configuration: the named model endpoints a worker may call, each with its
 * wire (`anthropic`: the Messages API; `openai-compatible`: Chat Completions, which is how
 * forkflow talks to OpenAI, vLLM, Ollama, SGLang and Gemini's OpenAI-compatible endpoint),
 * its base URL, the environment variable holding its key, its allowed models (the first is
 * the default) and its model aliases.
 *
 * Pure and workflow-safe: the worker loads and validates the configuration
 * (src/worker/providers.ts); model resolution is a pure function both sides can run.
 */
import { z } from 'zod';
import { modelIdSchema } from './agents';
import { DEFAULT_PROVIDER, providerNameSchema } from './model-allowlist';
import { schemaOnce } from './schema-once';

export const providerKindSchema = schemaOnce('providers#providerKindSchema', () => z.enum(['anthropic', 'openai-compatible']));
export type ProviderKind = z.infer<typeof providerKindSchema>;

const envVarSchema = schemaOnce('providers#envVarSchema', () => z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'));

/** One provider entry. */
export const providerSchema = schemaOnce('providers#providerSchema', () => z.strictObject({
  name: providerNameSchema,
  kind: providerKindSchema,
  /**
   * The SDK's base URL. `anthropic`: without `/v1` (default: the SDK's, or ANTHROPIC_BASE_URL
   * for the default entry); `openai-compatible`: with it (e.g. `https://api.openai.com/v1`,
   * `https://generativelanguage.googleapis.com/v1beta/openai`).
   */
  baseURL: z.url().optional(),
  /** The environment variable that holds the key (never the key itself). */
  apiKeyEnv: envVarSchema.optional(),
  /** Models this provider may serve; the first is the default. Empty: any model, no default. */
  models: z.array(modelIdSchema).default([]),
  /** `alias → model` (e.g. `{ "mini": "gpt-4.1-mini" }`); each target must be an allowed model. */
  aliases: z.record(z.string().min(1).max(64), modelIdSchema).default({}),
}).refine((p) => p.models.length === 0 || Object.values(p.aliases).every((m) => p.models.includes(m)), {
  message: 'every alias must map to a model listed in models',
  path: ['aliases'],
}));
export type ProviderConfig = z.output<typeof providerSchema>;

/** The configuration: provider entries with unique names. */
export const providersConfigSchema = schemaOnce('providers#providersConfigSchema', () => z
  .array(providerSchema)
  .min(1)
  .refine((ps) => new Set(ps.map((p) => p.name)).size === ps.length, { message: 'provider names must be unique' }));
export type ProvidersConfig = z.output<typeof providersConfigSchema>;

/**
 * The configuration when none is given: one Anthropic entry named `anthropic`, today's
 * single endpoint (its key and base URL come from the worker's own settings).
 */
export const DEFAULT_PROVIDERS: ProvidersConfig = [{ name: DEFAULT_PROVIDER, kind: 'anthropic', models: [], aliases: {} }];

/** A resolved choice, or why it is refused (said to the model or the caller as is). */
export type ModelChoice = { ok: true; provider: ProviderConfig; model: string } | { ok: false; error: string };

/**
 * Resolves `model` (an id, an alias, `inherit` or nothing) on provider `name`.
 * `inherit` and nothing take `inherited` when given (the caller's own model, kept only on
 * the caller's provider), else the provider's first allowed model.
 *
 * @example resolveModel(config, 'openai', 'mini') // { ok: true, provider, model: 'gpt-4.1-mini' }
 */
export function resolveModel(config: ProvidersConfig, name: string, model: string | undefined, inherited?: { provider: string; model: string }): ModelChoice {
  const provider = config.find((p) => p.name === name);
  if (!provider) return { ok: false, error: `Unknown provider "${name}". Configured providers: ${config.map((p) => p.name).join(', ')}.` };
  if (model === undefined || model === 'inherit') {
    if (inherited && inherited.provider === name) return { ok: true, provider, model: inherited.model };
    const first = provider.models[0];
    if (first) return { ok: true, provider, model: first };
    return { ok: false, error: `Provider "${name}" lists no models, so there is no default: pass model.` };
  }
  const target = provider.aliases[model] ?? model;
  if (provider.models.length === 0 || provider.models.includes(target)) return { ok: true, provider, model: target };
  const elsewhere = config.filter((p) => p.name !== name && (p.models.includes(model) || model in p.aliases)).map((p) => p.name);
  const where = elsewhere.length > 0 ? ` It is configured for ${elsewhere.join(', ')}, not for ${name}.` : '';
  return { ok: false, error: `Model "${model}" is not allowed on provider "${name}".${where} Allowed: ${provider.models.join(', ')}${Object.keys(provider.aliases).length ? `; aliases: ${Object.keys(provider.aliases).join(', ')}` : ''}.` };
}
