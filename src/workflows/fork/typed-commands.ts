/**
 * Commands typed into a running conversation (src/shared/agents/typed-command.ts says what they are):
 * the sendMessage handler queues one in the inbox, in its place among the messages, and the
 * turn loop runs it before the inbox is next delivered: the skill starts as a fork of the
 * agent under the Skill tool's refusals and limits (agent-launch.ts), and its output (or, for
 * a `background: true` skill, the word that it started) replaces the command in the queue.
 */
import { deprecatePatch } from '@temporalio/workflow';
import type { ToolResultBlock } from '../../shared/messages-api/anthropic';
import { forkSkills } from '../../shared/tree/agent-tools';
import type { ForkInput } from '../../shared/wire/fork-input';
import type { SendMessageArgs } from '../../shared/wire/messages';
import type { QueuedMessage } from '../../shared/tree/tree-input';
import { COMMAND_USE_PREFIX, commandTurnText, typedCommand, type TypedCommand } from '../../shared/agents/typed-command';
import type { ForkAgent } from './agent';
import { launchChild, refusal, type Launch } from './agent-launch';
import { skillAgentInput } from './child-input';
import { renderQueuedMessage } from './inbox';

/**
 * Before this patch a message typed as `/<skill> args` reached the agent as its text; a
 * recorded run that received one replays without the marker. Asked only for such a message.
 */
export const TYPED_COMMANDS_PATCH = 'forkflow-typed-commands-1';

/**
 * Queues `message` as a command when it is one for this agent: from a person or a service (an
 * agent's SendMessage carries its tree and is never a command), plain text naming one of its
 * skills. Returns false for anything else, which is queued as a message.
 */
export function takeTypedCommand(agent: ForkAgent, message: SendMessageArgs): boolean {
  const config = agent.input.subAgents;
  if (message.fromTree !== undefined || message.data !== undefined || !config?.enabled) return false;
  const command = typedCommand(message.message, forkSkills(config.agents));
  if (!command) return false;
  // Retirement step 2 (docs/guides/patches.md): no recorded history takes the old branch.
  deprecatePatch(TYPED_COMMANDS_PATCH);
  agent.inbox.enqueue({ priority: message.priority ?? 'next', kind: 'command', text: renderQueuedMessage(message), command, ...(message.from ? { from: message.from } : {}), ...(message.summary ? { summary: message.summary } : {}) });
  return true;
}

/** What the agent reads as the command's output, from the launch's answer. */
function outputOf(result: ToolResultBlock): string {
  const text = typeof result.content === 'string' ? result.content : (result.content ?? []).map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  let view: { status?: string; agentId?: string; content?: string; error?: string };
  try {
    view = JSON.parse(text) as typeof view;
  } catch {
    return `Not run: ${text}`;
  }
  if (view.status === 'async_launched') return `Started in the background as ${view.agentId}; its output comes back as a prompt of its own when it ends.`;
  if (view.status === 'completed') return view.content || '(no output)';
  return `It ended ${view.status}${view.error ? `: ${view.error}` : ''}.${view.content ? `\n${view.content}` : ''}`;
}

/** Runs one queued command as a fork of the agent; the text it leaves in the queue. */
async function runCommand(agent: ForkAgent, entry: QueuedMessage & { command: TypedCommand }): Promise<string> {
  const config = agent.input.subAgents!;
  const skill = forkSkills(config.agents).find((s) => s.name === entry.command.name)!;
  const input = skillAgentInput(skill, entry.command.args);
  const launch: Launch = { kind: 'skill', skill };
  const why = await refusal(agent, config, input, launch);
  if (why) return `Not run: ${why}`;
  const id = agent.children.nextId(agent.agentId, skill.name.replace(':', '-'));
  const before = agent.activity;
  agent.doing(`running /${skill.name}`);
  try {
    return outputOf(await launchChild(agent, config, { id, use: { id: `${COMMAND_USE_PREFIX}${entry.seq}` }, input, launch, background: skill.background === true }));
  } finally {
    agent.doing(before);
  }
}

/** Runs every queued command, in order, before the inbox is delivered (nothing is awaited when none is queued). */
export async function settleCommands(agent: ForkAgent): Promise<void> {
  for (let entry = agent.inbox.nextCommand(); entry; entry = agent.inbox.nextCommand()) {
    const command = entry.command ?? { name: 'command' };
    agent.inbox.settleCommand(entry.seq, commandTurnText(command, await runCommand(agent, { ...entry, command })));
  }
}

/**
 * A finished agent resumed by a message that is a typed command: the command is queued (its
 * run's opening then holds no message) and runs before the first turn, which reads its output.
 * Returns the input the run sets up from, without the message; undefined when it is no command.
 */
export function resumedByCommand(agent: ForkAgent, input: ForkInput): ForkInput | undefined {
  const continuation = input.continuation;
  if (!continuation?.message || !takeTypedCommand(agent, continuation.message)) return undefined;
  const { message: _queued, ...rest } = continuation;
  return { ...input, continuation: rest };
}
