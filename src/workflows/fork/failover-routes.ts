/**
 * Where an agent's model calls may go (src/shared/providers/failover.ts): its provider and model, then
 * their fallbacks, from its tree's catalogue (`subAgents.providers`) or, for a sub-agent
 * without one, from its own input (`failover`); the failover settings that apply; what a
 * sub-agent is given; and a model's configured price on a provider. Reads a narrow view of the
 * agent, so the agent and the failover driver both use it without an import circle.
 */
import { agentProvider, priceOf } from '../../shared/providers/agent-provider';
import { FAILOVER_DEFAULTS, failoverChain, failoverSettings, type Route } from '../../shared/providers/failover';
import type { ForkInput } from '../../shared/wire/fork-input';
import { DEFAULT_PROVIDER } from '../../shared/providers/model-allowlist';
import type { Price } from '../../shared/providers/pricing';
import type { FailoverSettings } from '../../shared/providers/providers';

/** What these rules read of an agent. */
export interface RoutesView {
  readonly input: ForkInput;
  readonly model: string;
}

function providerOf(a: RoutesView): string {
  return agentProvider(a.input, { provider: a.input.subAgents?.provider ?? DEFAULT_PROVIDER });
}

/** The chain of `primary` as the agent knows it: from its tree's catalogue, else its own input's fallbacks. */
function chainFrom(a: RoutesView, primary: Route): Route[] {
  const catalogue = a.input.subAgents?.providers;
  if (catalogue) return failoverChain(catalogue, primary);
  const own = a.input.failover?.fallbacks ?? [];
  return [primary, ...own.filter((f) => f.provider !== primary.provider || f.model !== primary.model)];
}

/** Its provider and model, then their fallbacks; just the first without any. */
export function failoverChainOf(a: RoutesView): Route[] {
  return chainFrom(a, { provider: providerOf(a), model: a.model });
}

/** How its calls fail over: its provider's settings. */
export function failoverSettingsOf(a: RoutesView): FailoverSettings {
  const catalogue = a.input.subAgents?.providers;
  return catalogue ? failoverSettings(catalogue, providerOf(a)) : (a.input.failover?.settings ?? FAILOVER_DEFAULTS);
}

/**
 * The `failover` input of a sub-agent on `route` (a fork: the agent's own), when it has
 * fallbacks, so a sub-agent without the catalogue fails over all the same. With a catalogue the
 * child's provider's settings apply; without one, a child on another route gets none.
 */
export function failoverForChild(a: RoutesView, route: Route): Pick<ForkInput, 'failover'> {
  const catalogue = a.input.subAgents?.providers;
  const own = failoverChainOf(a)[0]!;
  if (!catalogue && (route.provider !== own.provider || route.model !== own.model)) return {};
  const chain = chainFrom(a, route);
  if (chain.length < 2) return {};
  return { failover: { fallbacks: chain.slice(1), settings: catalogue ? failoverSettings(catalogue, route.provider) : failoverSettingsOf(a) } };
}

/** `model`'s price on `provider` as the tree's catalogue configures it (undefined: the built-in table). */
export function priceOn(a: RoutesView, provider: string, model: string): Price | undefined {
  return priceOf(a.input.subAgents?.providers, provider, model);
}
