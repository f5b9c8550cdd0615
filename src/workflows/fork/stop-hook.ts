/**
 * The turn loop with a service's Stop hooks (hooks.ts): when the model has finished its
 * answer, a hook may send it back to work with a message (its next user turn), at most
 * STOP_BLOCKS times in a row. An agent without Stop hooks runs its turns as before.
 */
import { hooksFor } from '../../shared/tools/hooks';
import { STOP_BLOCKS } from '../../shared/tools/service-contract';
import type { StopReason } from '../../shared/wire/status';
import type { ForkAgent } from './agent';
import { stopHook } from './hooks';
import { deliverWakingMessages, runTurns } from './turn-loop';

export async function runTurnsUntilStopped(agent: ForkAgent): Promise<StopReason> {
  for (let blocked = 0; ; blocked++) {
    const reason = await runTurns(agent);
    if (reason !== 'end_turn' || blocked >= STOP_BLOCKS || hooksFor(agent.input.hooks, 'Stop').length === 0) return reason;
    const message = await stopHook(agent);
    if (message === undefined) return reason;
    agent.enqueueMessage({ message, from: 'hook:Stop', summary: 'a Stop hook: not done yet', priority: 'now' });
    deliverWakingMessages(agent);
  }
}
