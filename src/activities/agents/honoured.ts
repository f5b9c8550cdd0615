/**
 * Which valid agent-file fields forkflow can actually carry out, and the named report for
 * each one it cannot (seed 001: a Claude Code agent file must not behave differently in
 * silence). A field reported here is removed from the definition, so nothing downstream
 * pretends to honour it. Pure: works on the fields `buildDefinition` has already checked.
 */
import type { AgentProblem } from '../../shared/agents';
import { DEFAULTS } from '../../shared/constants';
import type { Report } from './lists';

/** Claude Code's model aliases (seed 001: `sonnet` / `opus` / `haiku`). */
const MODEL_ALIASES = ['sonnet', 'opus', 'haiku'];

/** Why a named agent's field (or one value of it) cannot be honoured, and what happens instead. */
interface Unhonoured {
  /** True when this value cannot be honoured (absent: any value). */
  when?: (value: unknown) => boolean;
  problem: string;
  fix: string;
}

/** Fields of a named agent that forkflow reads but cannot do what the seed says with. */
const NAMED_AGENT: Record<string, Unhonoured> = {
  model: {
    when: (v) => typeof v === 'string' && MODEL_ALIASES.includes(v.toLowerCase()),
    problem: "model names a Claude Code alias, which forkflow does not map to a model id (it would send the alias as written), so the caller's model is used",
    fix: `Write a full model id such as ${DEFAULTS.model}, or inherit.`,
  },
  memory: {
    problem: 'memory (persistent user/project/local agent memory) is not supported by forkflow, so this agent runs without memory',
    fix: 'Delete memory:, or put what the agent must remember in its system prompt.',
  },
  effort: {
    problem: 'effort cannot be honoured: the Messages API as forkflow sends it has no effort setting, so the model default applies',
    fix: 'Delete effort:, or give the caller a thinking budget (ForkInput.thinking), which its children inherit.',
  },
  isolation: {
    when: (v) => v === 'remote',
    problem: 'isolation: remote in a definition is not honoured (only an Agent call with isolation: "remote" runs on the remote queue), so this agent runs locally',
    fix: 'Delete the line, or have the caller pass isolation: "remote" in its Agent call.',
  },
};

/**
 * The fields a `context: fork` command (a skill) uses: it runs as a fork of its caller, so it
 * takes its caller's model, tools, permissions, limits and servers (skill-tool.ts).
 */
const FORK_COMMAND_FIELDS = new Set(['context', 'allowedTools', 'background', 'model']);
/** Fields whose loss must not go unnoticed at run time: a command carrying them is not loaded (fails closed). */
const FORK_COMMAND_SKIPS = new Set(['hooks', 'requiredMcpServers']);

/** File spelling of a definition key, for messages (`allowedTools` is written `allowed-tools`). */
const spelling = (key: string): string => (key === 'allowedTools' ? 'allowed-tools' : key);

/**
 * Removes from `fields` what forkflow cannot honour and reports each by name (outcome
 * `unsupported`). Returns true when the file must be skipped (a fork command carrying a
 * policy field it would otherwise lose silently).
 */
export function dropUnhonoured(fields: Record<string, unknown>, report: Report): boolean {
  const unsupported = (field: string, problem: string, fix: string, outcome: AgentProblem['outcome'] = 'unsupported'): void =>
    report({ field: spelling(field), outcome, problem, fix });
  if (fields.context === 'fork') {
    let skip = false;
    for (const key of Object.keys(fields)) {
      if (FORK_COMMAND_FIELDS.has(key)) continue;
      const name = spelling(key);
      if (FORK_COMMAND_SKIPS.has(key)) {
        skip = true;
        unsupported(key, `${name} cannot be honoured by a context: fork command, which runs as a fork with its caller's servers and hooks`, `Delete ${name}:, or remove context: fork to make this a named agent; until then it is not loaded.`, 'skipped');
      } else {
        unsupported(key, `${name} is not honoured by a context: fork command, which runs as a fork of its caller (its tools, model and limits)`, `Delete ${name}:, or remove context: fork to make this a named agent.`);
      }
      delete fields[key];
    }
    return skip;
  }
  for (const [key, rule] of Object.entries(NAMED_AGENT)) {
    if (!(key in fields) || (rule.when && !rule.when(fields[key]))) continue;
    unsupported(key, rule.problem, rule.fix);
    delete fields[key];
  }
  return false;
}
