/**
 * Which valid agent-definition fields forkflow cannot carry out (seed 001: an agent must not
 * behave differently in silence). One table for both doors a definition comes in by: an agent
 * file (the loader reports the field and leaves it out: src/activities/agents/honoured.ts) and
 * an inline `subAgents.agents` entry of a start input (refused by name: fork-input.ts). Pure.
 */
import type { AgentDefinition } from './agents';
import { ANTHROPIC_MODEL_ALIASES, isClaudeCodeAlias } from '../providers/agent-provider';
import { DEFAULTS } from '../wire/constants';

/** Why a named agent's field (or one value of it) cannot be honoured, and what to do about it. */
export interface Unhonoured {
  /** True when this value cannot be honoured (absent: any value). */
  when?: (value: unknown) => boolean;
  problem: string;
  fix: string;
  /** Kept in the definition (a tree may still honour it) and not refused inline; reported at load all the same. */
  keep?: boolean;
}

/** Fields of a named agent that forkflow reads but cannot do what the seed says with. */
export const NAMED_AGENT_UNHONOURED: Readonly<Record<string, Unhonoured>> = {
  model: {
    when: isClaudeCodeAlias,
    problem: `model names a Claude Code alias: a tree's provider catalogue maps it (subAgents.providers.<provider>.aliases; one that does not define it refuses the spawn by name); without one it is forkflow's built-in id on Anthropic (${Object.entries(ANTHROPIC_MODEL_ALIASES).map(([a, id]) => `${a}: ${id}`).join(', ')}), and on any other provider the caller's model is used`,
    fix: `Write a full model id such as ${DEFAULTS.model} to pin one, or inherit; or map the alias in the tree's subAgents.providers.`,
    keep: true,
  },
};

/**
 * The fields a `context: fork` command (a skill) uses: it runs as a fork of its caller, so it
 * takes its caller's model, tools, permissions, limits and servers (skill-tool.ts).
 */
export const FORK_COMMAND_FIELDS: ReadonlySet<string> = new Set(['context', 'allowedTools', 'background', 'model']);

/** What every definition object carries besides its frontmatter fields. */
const ALWAYS = new Set(['name', 'description', 'systemPrompt', 'sourceFile']);

/** One field of an inline definition that cannot be honoured, with the message naming it. */
export interface InlineProblem {
  field: string;
  message: string;
}

/**
 * The fields of a definition given inline (`subAgents.agents`) that forkflow cannot honour,
 * each named: the start is refused rather than run an agent that silently lacks them.
 */
export function inlineDefinitionProblems(a: AgentDefinition): InlineProblem[] {
  const fields = a as unknown as Record<string, unknown>;
  const out: InlineProblem[] = [];
  const present = Object.keys(fields).filter((k) => !ALWAYS.has(k) && fields[k] !== undefined);
  if (a.context === 'fork') {
    for (const key of present.filter((k) => !FORK_COMMAND_FIELDS.has(k))) {
      out.push({ field: key, message: `agent "${a.name}": ${key} is not honoured by a context: fork definition, which runs as a fork of its caller (its tools, model and limits); remove ${key}, or context: fork to make it a named agent` });
    }
    return out;
  }
  for (const key of present) {
    const rule = Object.hasOwn(NAMED_AGENT_UNHONOURED, key) ? NAMED_AGENT_UNHONOURED[key] : undefined;
    // A kept field is read where the agent starts (a model alias: agent-provider.ts), as a loaded file's is.
    if (!rule || rule.keep || (rule.when && !rule.when(fields[key]))) continue;
    out.push({ field: key, message: `agent "${a.name}": ${rule.problem}; remove ${key} from the definition (${rule.fix})` });
  }
  return out;
}
