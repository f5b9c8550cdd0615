/**
 * Every wait of a fork (an approval, a message, its children) runs through {@link whileWaiting}.
 * Under `keep-alive`, a wait that outlasts most of the cache TTL sends a keep-alive — the last
 * request again, `max_tokens` minimal — on a durable timer, again and again until the wait
 * ends; its usage is the fork's (usage, budget, the `keepAlive` count in status). Under the
 * other policies a wait is just the wait: no command is added, so histories recorded before
 * this module replay unchanged.
 */
import { isCancellation, log, sleep } from '@temporalio/workflow';
import type { ModelCallResult } from '../../shared/wire/activity-io';
import { budgetExhausted } from '../../shared/tree/budget';
import { keepAliveModel, modelQueueOf } from '../activities';
import { budgetOf } from './call-input';
import { spending } from './tree-shares';
import { workflowNow } from '../clock';
import type { ForkAgent } from './agent';
import { countOnProvider } from './provider-usage';

/**
 * Runs `wait` while keeping the cache warm under the fork's policy. Under `keep-alive` a loop
 * runs beside the wait; its timer is left to fire when the wait ends first (cancelling a
 * timer from a signal's or update's completion orders commands differently on replay,
 * sdk-typescript#1966, the reason approvals.ts leaves its own timeout timer running).
 */
export async function whileWaiting<T>(agent: ForkAgent, wait: () => Promise<T>): Promise<T> {
  const generation = agent.warmth.enter();
  if (generation !== undefined) {
    void keepWarm(agent, generation).catch((err: unknown) => {
      // The fork was cancelled while waiting: its own path reports that. Anything else is logged, never fatal.
      if (!isCancellation(err)) log.warn('fork.keep_alive_stopped', { agentId: agent.agentId, error: String(err) });
    });
  }
  try {
    return await wait();
  } finally {
    agent.warmth.leave();
  }
}

async function keepWarm(agent: ForkAgent, generation: number): Promise<void> {
  const warmth = agent.warmth;
  for (;;) {
    const due = warmth.dueAt();
    if (due === undefined) return;
    if (due > workflowNow()) await sleep(due - workflowNow());
    if (!warmth.waiting(generation)) return;
    // A later call refreshed the prefix meanwhile: the timer was early.
    if ((warmth.dueAt() ?? 0) > workflowNow()) continue;
    if (budgetExhausted(agent.budgetUsage, { turns: agent.turns, toolCalls: agent.toolUses }, agent.input.budget)) return;
    const next = warmth.nextKeepAlive(agent.tally.keepAlive?.calls ?? 0);
    if (!next) return;
    // In a tree that lends budget shares a keep-alive charges the share the agent holds now (one that does not fit is skipped).
    const input = agent.shares ? { ...next, budget: budgetOf(agent) } : next;
    const scheduledAt = workflowNow();
    const n = input.keepAlive!;
    let result: ModelCallResult;
    try {
      result = await spending(
        agent,
        input,
        () => keepAliveModel.callModel.executeWithOptions({ summary: `keep-alive ${n} · after turn ${input.turn} · model ${agent.summary.model}`, ...modelQueueOf(agent.input) }, [input]),
        (r) => ({ ...(input.provider ? { provider: input.provider } : {}), model: r.model, usage: r.usage, kind: 'keepAlive' }),
      );
    } catch (err) {
      if (isCancellation(err)) throw err;
      // Past its few retries the entry is probably gone already: the next turn writes it again.
      log.warn('fork.keep_alive_failed', { agentId: agent.agentId, turn: input.turn, error: String(err) });
      return;
    }
    agent.tally.recordKeepAlive(result.usage);
    countOnProvider(agent, input, result.usage);
    warmth.refreshed(scheduledAt, result);
  }
}
