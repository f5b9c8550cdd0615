/**
 * Failover of an agent's model calls (src/shared/providers/failover.ts has the rules and the state):
 * a call starts on the candidate the agent's state says (the primary, or a fallback while
 * its cooldown runs); a call that the activity gave up on as unavailable is made again on the
 * next candidate. Each switch is a new activity in history with its provider and model in its
 * input, so a replay takes the same path; status and the live stream show it.
 *
 * Agents without fallbacks (no `subAgents.providers`, or a provider without `fallbacks`) call
 * exactly as before: same input, same commands.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { ModelCallInput, ModelCallResult } from '../../shared/wire/activity-io';
import { MODEL_UNAVAILABLE_FAILURE, type Route } from '../../shared/providers/failover';
import { estimateCostUsd } from '../../shared/providers/pricing';
import { workflowNow } from '../clock';
import type { ForkAgent } from './agent';
import { failoverChainOf, failoverSettingsOf, priceOn } from './failover-routes';

function unavailable(err: unknown): string | undefined {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === MODEL_UNAVAILABLE_FAILURE ? err.cause.message : undefined;
}

/** `input` sent to candidate `index` of `chain` (the primary's input is unchanged, but for `failoverAfter`). */
function routed(input: ModelCallInput, chain: Route[], index: number, afterAttempts: number): ModelCallInput {
  const to = chain[index]!;
  const out: ModelCallInput = index === 0 ? { ...input } : { ...input, provider: to.provider, model: to.model };
  if (index < chain.length - 1) out.failoverAfter = afterAttempts;
  return out;
}

/**
 * Makes the model call of `turn` with `call`, moving it down the agent's failover chain while
 * candidates are unavailable. Returns the result and the input the serving call was given.
 */
export async function callWithFailover(
  agent: ForkAgent,
  turn: number,
  input: ModelCallInput,
  call: (input: ModelCallInput, summary: string) => Promise<ModelCallResult>,
): Promise<{ result: ModelCallResult; input: ModelCallInput }> {
  const chain = failoverChainOf(agent);
  if (chain.length < 2) return { result: await call(input, `turn ${turn} · model ${agent.summary.model}`), input };
  const settings = failoverSettingsOf(agent);
  for (let index = agent.failover.start(chain, workflowNow()); ; index++) {
    const sent = routed(input, chain, index, settings.afterAttempts);
    const to = chain[index]!;
    try {
      const result = await call(sent, `turn ${turn} · ${to.provider} ${to.model}${index > 0 ? ' (fallback)' : ''}`);
      const back = agent.failover.served(chain, index, workflowNow(), turn, result.usage, estimateCostUsd(result.model, result.usage, priceOn(agent, to.provider, result.model)));
      if (back) agent.live.failover(turn, { from: back.from, to: back.to, reason: back.reason });
      return { result, input: sent };
    } catch (err) {
      const reason = unavailable(err);
      // The activity only gives up this way when the input had a next candidate (failoverAfter).
      if (reason === undefined || index >= chain.length - 1) throw err;
      const now = workflowNow();
      const moved = agent.failover.failed(chain, index, now, turn, reason, settings.cooldownMs);
      agent.live.failover(turn, { from: moved.from, to: moved.to, reason: moved.reason, until: now + settings.cooldownMs });
      agent.doing(`model turn ${turn} (failover to ${moved.to.provider})`);
    }
  }
}
