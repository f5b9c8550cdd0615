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
import { modelIdSchema } from '../agents/agents';
import { DEFAULT_PROVIDER, providerNameSchema } from './model-allowlist';
import { schemaOnce } from '../base/schema-once';

export const providerKindSchema = schemaOnce('providers/providers#providerKindSchema', () => z.enum(['anthropic', 'openai-compatible']));
export type ProviderKind = z.infer<typeof providerKindSchema>;

const envVarSchema = schemaOnce('providers/providers#envVarSchema', () => z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'));

/**
 * One fallback of a provider, tried in order when the provider is overloaded or out
 * (src/shared/providers/failover.ts): another provider entry and its model (absent: that provider's
 * first model). `for`: only calls of these models of this provider fail over to it (absent: all).
 */
export const fallbackSchema = schemaOnce('providers/providers#fallbackSchema', () => z.strictObject({
  provider: providerNameSchema,
  model: modelIdSchema.optional(),
  for: z.array(modelIdSchema).min(1).optional(),
}));
export type FallbackConfig = z.output<typeof fallbackSchema>;

/** A model's price in US dollars per million tokens (src/shared/providers/pricing.ts `Price`). */
export const priceSchema = schemaOnce('providers/providers#priceSchema', () => {
  const usd = z.number().min(0).max(10_000);
  return z.strictObject({ input: usd, output: usd, cacheRead: usd.optional(), cacheWrite5m: usd.optional(), cacheWrite1h: usd.optional() });
});

/** When a call leaves its provider, and for how long its agent's calls stay away (workflow time). */
export const failoverSettingsSchema = schemaOnce('providers/providers#failoverSettingsSchema', () => z.strictObject({
  /** Attempts of one call that must fail with an outage (529, 5xx, connection) before it moves on. */
  afterAttempts: z.number().int().min(1).max(20).default(3),
  /** After a switch, the agent's calls go to the fallback this long; then the primary is tried first again. */
  cooldownMs: z.number().int().min(0).max(86_400_000).default(30_000),
}));
export type FailoverSettings = z.output<typeof failoverSettingsSchema>;

/** One provider entry. */
export const providerSchema = schemaOnce('providers/providers#providerSchema', () => z.strictObject({
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
  /** Where its calls go, in order, when it is overloaded or out (never for a 4xx). */
  fallbacks: z.array(fallbackSchema).max(8).optional(),
  /** How failover to `fallbacks` behaves (defaults: after 3 attempts, 30 s away). */
  failover: failoverSettingsSchema.optional(),
  /** Prices of its models (`model → price`); a model not listed: the built-in table (Anthropic families, else sonnet's). */
  pricing: z.record(modelIdSchema, priceSchema).optional(),
}).refine((p) => p.models.length === 0 || Object.values(p.aliases).every((m) => p.models.includes(m)), {
  message: 'every alias must map to a model listed in models',
  path: ['aliases'],
}));
export type ProviderConfig = z.output<typeof providerSchema>;

/** The configuration: provider entries with unique names. */
export const providersConfigSchema = schemaOnce('providers/providers#providersConfigSchema', () => z
  .array(providerSchema)
  .min(1)
  .refine((ps) => new Set(ps.map((p) => p.name)).size === ps.length, { message: 'provider names must be unique' })
  .superRefine((ps, ctx) => {
    ps.forEach((p, i) => (p.fallbacks ?? []).forEach((f, j) => {
      const problem = fallbackProblem(ps, p, f);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, path: [i, 'fallbacks', j] });
    }));
  }));
export type ProvidersConfig = z.output<typeof providersConfigSchema>;

/** Why fallback `f` of provider `p` cannot be used, or undefined. */
function fallbackProblem(ps: readonly ProviderConfig[], p: ProviderConfig, f: FallbackConfig): string | undefined {
  const target = ps.find((t) => t.name === f.provider);
  if (!target) return `fallback provider "${f.provider}" is not configured`;
  if (f.model === undefined && target.models.length === 0) return `fallback provider "${f.provider}" lists no models: give the fallback a model`;
  if (f.model !== undefined && target.models.length > 0 && !target.models.includes(f.model)) return `fallback model "${f.model}" is not listed for provider "${f.provider}" (give a model id, not an alias)`;
  if (f.provider === p.name && (f.model === undefined || (f.for ?? []).includes(f.model))) return 'a fallback must not be the model it falls back from';
  const stray = (f.for ?? []).filter((m) => p.models.length > 0 && !p.models.includes(m));
  if (stray.length > 0) return `fallback "for" names models not listed for provider "${p.name}": ${stray.join(', ')}`;
  return undefined;
}

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
