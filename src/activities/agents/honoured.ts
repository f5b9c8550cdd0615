/**
 * Which valid agent-file fields forkflow can actually carry out, and the named report for
 * each one it cannot (seed 001: a Claude Code agent file must not behave differently in
 * silence). A field reported here is removed from the definition, so nothing downstream
 * pretends to honour it, unless a tree may still honour it (a model alias its provider
 * catalogue maps: src/shared/providers/agent-provider.ts `definitionModel`). Pure: works on the fields `buildDefinition` has already checked.
 */
import type { AgentProblem } from '../../shared/agents/agents';
import { FORK_COMMAND_FIELDS, NAMED_AGENT_UNHONOURED } from '../../shared/agents/agent-honoured';
import type { Report } from './lists';

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
  for (const [key, rule] of Object.entries(NAMED_AGENT_UNHONOURED)) {
    if (!(key in fields) || (rule.when && !rule.when(fields[key]))) continue;
    unsupported(key, rule.problem, rule.fix);
    if (!rule.keep) delete fields[key];
  }
  return false;
}
