/**
 * The switch that disables background tasks in an agent tree (seed 001's
 * DISABLE_BACKGROUND_TASKS): the fork input's `backgroundTasks: false`, inherited by every
 * sub-agent. Then the Agent tool offers no `run_in_background`, every sub-agent (a fork too)
 * runs in the foreground until it ends, a definition's `background: true` runs in the
 * foreground, and what can only run in the background (a call's run_in_background, a
 * teammate, a background Bash command) is refused by name.
 */
import type { ForkAgent } from './agent';

/** Whether this agent's tree disables background tasks. */
export function backgroundOff(agent: ForkAgent): boolean {
  return agent.input.backgroundTasks === false;
}

/** Why a call asking for the background is refused, naming the switch. */
export function backgroundRefusal(what: string): string {
  return `${what} cannot run: background tasks are disabled in this agent tree (backgroundTasks: false). Run it in the foreground instead.`;
}
