/**
 * A command typed into a running conversation (seed 001's slash-command fork): a message from
 * a person or a service (not an agent's SendMessage) whose text is `/<skill> [args]`, where
 * `<skill>` is one of the agent's `context: fork` skills, runs that skill as a fork of the
 * agent, and the agent reads the command and its output as its next user turn, as Claude Code
 * shows a command's output in the conversation. A skill with `background: true` runs as the
 * seed's assistant mode does: the turn says it started, and its output comes back later as a
 * prompt of its own (not a task notification). Pure: parsing and the text the agent reads.
 */
import type { AgentDefinition } from './agents';

/** A typed command: which skill, and the rest of the line(s) as its arguments. */
export interface TypedCommand {
  name: string;
  args?: string;
}

/** The tool-use id a command's child is recorded under (children.ts tells its outcome apart by it). */
export const COMMAND_USE_PREFIX = 'command-';

/**
 * The command `text` types, when it names one of `skills`: `/name`, then whitespace and the
 * arguments. Anything else (no slash, an unknown name, `//`, a path such as `/etc/hosts`) is
 * an ordinary message.
 *
 * @example typedCommand('/audit src/', skills) // { name: 'audit', args: 'src/' }
 */
export function typedCommand(text: string, skills: readonly Pick<AgentDefinition, 'name' | 'context'>[]): TypedCommand | undefined {
  const m = /^\/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  const name = m[1]!;
  if (!skills.some((s) => s.context === 'fork' && s.name === name)) return undefined;
  const args = m[2]?.trim();
  return args ? { name, args } : { name };
}

/** Keeps text from closing the tag it is put in. */
function inside(tag: string, text: string): string {
  return text.replace(new RegExp(`</${tag}`, 'gi'), (t) => `<\\${t.slice(1)}`);
}

/** What the agent reads for a command: the command, its arguments and its output, in Claude Code's tags. */
export function commandTurnText(command: TypedCommand, output: string): string {
  return [
    `<command-name>/${command.name}</command-name>`,
    ...(command.args ? [`<command-args>${inside('command-args', command.args)}</command-args>`] : []),
    `<command-output>\n${inside('command-output', output)}\n</command-output>`,
  ].join('\n');
}

/** The skill a command's child runs, from its record's `subagentType` (`skill:<name>`). */
function skillOfRecord(subagentType: string | undefined): string {
  return subagentType?.startsWith('skill:') ? subagentType.slice('skill:'.length) : 'command';
}

/**
 * The prompt a background command's output comes back as (seed 001's assistant mode: a hidden
 * prompt re-queued, not a task notification): the command and its output, queued `later` as
 * system news is, and tagged with its child so TaskOutput of that child takes it instead.
 */
export function commandPrompt(record: { agentId: string; subagentType?: string; result?: { status: string; text: string; error?: string } }): { priority: 'later'; kind: 'message'; taskId: string; from: string; summary: string; text: string } {
  const name = skillOfRecord(record.subagentType);
  const o = record.result;
  const output = !o ? 'It ended without an outcome.' : o.status === 'completed' ? o.text || '(no output)' : `It ended ${o.status}${o.error ? `: ${o.error}` : ''}.${o.text ? `\n${o.text}` : ''}`;
  return { priority: 'later', kind: 'message', taskId: record.agentId, from: `command:/${name}`, summary: `/${name}`, text: commandTurnText({ name }, output) };
}
