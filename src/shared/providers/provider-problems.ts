/**
 * Why a fork input's provider choices cannot run in its tree: refinements of the fork input
 * (src/shared/wire/fork-input.ts), kept with the providers they judge.
 */
import type { ProviderCatalogue } from './agent-provider';

/** Why an agent's `provider` (and `model`) cannot run under its tree's `subAgents.providers`, or undefined. */
export function providerProblem(v: { provider?: string; model?: string; subAgents?: { providers?: ProviderCatalogue } }): string | undefined {
  const catalogue = v.subAgents?.providers;
  if (v.provider === undefined || !catalogue) return undefined;
  const entry = catalogue[v.provider];
  if (!entry) return `provider "${v.provider}" is not one of subAgents.providers (${Object.keys(catalogue).join(', ')})`;
  if (v.model === undefined || entry.models.includes(v.model)) return undefined;
  const alias = entry.aliases[v.model];
  return alias ? `model "${v.model}" is an alias on ${v.provider}: give the model id "${alias}"` : `model "${v.model}" is not allowed on provider "${v.provider}" (allowed: ${entry.models.join(', ')})`;
}

/** Why a named agent's `provider:` cannot run in its tree, or undefined (nothing is started with one that cannot). */
export function definitionProviderProblem(a: { name: string; provider?: string }, sub: { provider: string; providers?: ProviderCatalogue }): string | undefined {
  if (a.provider === undefined) return undefined;
  if (sub.providers) return a.provider in sub.providers ? undefined : `agent "${a.name}" names provider "${a.provider}", which is not one of subAgents.providers (${Object.keys(sub.providers).join(', ')})`;
  return a.provider === sub.provider ? undefined : `agent "${a.name}" names provider "${a.provider}", but this tree runs on "${sub.provider}" and offers no other (no subAgents.providers)`;
}
