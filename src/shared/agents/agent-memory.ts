/**
 * A named agent's persistent memory (seed 001, the definition's `memory` field): a directory
 * of notes kept from one run of the agent to the next, its index read into the agent's system
 * prompt when it starts. forkflow honours the seed's three scopes:
 * - `project`: `.claude/agent-memory/<agent>/` in the agent's workspace (kept with the project,
 *   shared by its users),
 * - `local`: `.claude/agent-memory-local/<agent>/` in the workspace (the same place Claude Code
 *   keeps out of version control),
 * - `user`: `.claude/agent-memory/<agent>/` in the home of the tree's tenant (the start input's
 *   `tenant`), a directory under the worker's FORKFLOW_USER_MEMORY_ROOT that the operator made
 *   for that tenant. The seed keeps it in the home of the user running the agent; a shared
 *   worker's own home belongs to no one caller, so the operator names one per tenant. That
 *   directory is the one place outside the workspace its tools reach: Read, Glob and Grep see
 *   it, FileWrite and FileEdit write in it, and Bash sees it read-only.
 *
 * The index is read once, by an activity on the workspace's worker, when the agent starts
 * (src/activities/agent-memory.ts); the system prompt then stays the same for the agent's
 * whole life, continue-as-new and resumes included, so its prompt cache holds. Pure.
 */
import { z } from 'zod';
import type { SystemParam } from '../messages-api/anthropic';
import { schemaOnce } from '../base/schema-once';

/** The scopes forkflow honours (`user` where the tree names its tenant). */
export const HONOURED_MEMORY_SCOPES = ['user', 'project', 'local'] as const;
export type HonouredMemoryScope = (typeof HONOURED_MEMORY_SCOPES)[number];

/** A tenant's name: one plain directory name under the worker's user-memory root (never a path). */
export const tenantSchema = schemaOnce('agents/agent-memory#tenantSchema', () => z.string().max(64).regex(/^[a-z0-9][a-z0-9_.-]*$/, 'a tenant is lower-case letters, digits, "_", "." and "-", starting with a letter or digit'));

/** The index file the agent keeps in its memory directory. */
export const MEMORY_INDEX_FILE = 'MEMORY.md';
/** At most this many lines of the index reach the prompt. */
export const MEMORY_INDEX_LINES = 200;
/** And at most this many bytes (a line can be long). */
export const MEMORY_INDEX_BYTES = 25_000;

/** What a fork input says about the agent's memory: set for a named agent whose definition has `memory`. */
export const agentMemorySchema = schemaOnce('agents/agent-memory#agentMemorySchema', () => z.strictObject({
  scope: z.enum(HONOURED_MEMORY_SCOPES),
  /** Whose home a `user` memory is in (the tree's `tenant`); only with scope `user`. */
  tenant: tenantSchema.optional(),
  /** The agent's name: its memory directory's name (a definition name: lower-case letters, digits, '-'; a plugin's agent `<plugin>__<name>`). */
  agent: z.string().max(130).regex(/^[a-z0-9][a-z0-9-]{0,63}(?:__[a-z0-9][a-z0-9-]{0,63})?$/, 'an agent memory is named by its agent: lower-case letters, digits and "-" (a plugin\'s agent: <plugin>__<name>)'),
}).refine((m) => (m.scope === 'user') === (m.tenant !== undefined), { message: 'a user memory names its tenant, and only a user memory does', path: ['tenant'] }));
export type AgentMemory = z.infer<typeof agentMemorySchema>;

/** Where the scope keeps an agent's memory, relative to the workspace root (`user`: to the tenant's home). */
export function agentMemoryPath(memory: AgentMemory): string {
  return `${memory.scope === 'local' ? '.claude/agent-memory-local' : '.claude/agent-memory'}/${memory.agent}`;
}

/** What the worker found in the memory directory when the agent started. */
export interface MemoryIndex {
  /** The directory's canonical path on the workspace's worker (where the agent writes). */
  dir: string;
  /** The index's first lines (at most {@link MEMORY_INDEX_LINES} and {@link MEMORY_INDEX_BYTES}); absent: no index yet. */
  index?: string;
  /** The index had more than what is shown. */
  truncated: boolean;
}

const SCOPE_WORDS: Record<HonouredMemoryScope, string> = {
  user: 'it is kept in your home, outside this project, so it follows you from one project to the next',
  project: 'it is kept in this project, so whoever runs this agent here shares it',
  local: 'it is kept in this workspace only, outside version control',
};

/** The section appended to the agent's system prompt. */
export function memoryPromptOf(memory: AgentMemory, found: MemoryIndex): string {
  const file = `${found.dir}/${MEMORY_INDEX_FILE}`;
  const shown = found.index === undefined || found.index.trim() === ''
    ? `${MEMORY_INDEX_FILE} is empty: this is the first run with this memory.`
    : `${MEMORY_INDEX_FILE} as this run started${found.truncated ? ` (cut: only its first ${MEMORY_INDEX_LINES} lines, at most ${MEMORY_INDEX_BYTES} bytes, reach you; keep it shorter)` : ''}:\n<agent-memory>\n${found.index.replace(/<\/agent-memory/gi, (tag) => `<\\${tag.slice(1)}`)}\n</agent-memory>`;
  return [
    '# Agent memory',
    `You keep notes from one run to the next in ${found.dir} (scope ${memory.scope}: ${SCOPE_WORDS[memory.scope]}).`,
    `- ${file} is the index: at most ${MEMORY_INDEX_LINES} lines reach your next run, so keep one short line per topic and put details in topic files beside it, linked from the index.`,
    '- Read it before you start; when you learn something a later run will need (a convention of this codebase, a recurring problem and its fix, where things live), write it there with FileWrite or FileEdit, and correct notes that turned out wrong.',
    '- Never write secrets, credentials or personal data into it.',
    '',
    shown,
  ].join('\n');
}

/** `system` with `section` appended: to a string after a blank line, to blocks as one more block. */
export function withMemorySection(system: SystemParam, section: string): SystemParam {
  if (typeof system === 'string') return system === '' ? section : `${system}\n\n${section}`;
  return [...system, { type: 'text', text: section }];
}

/**
 * The memory a definition asks for: `user` only in a tree with a tenant (undefined without one;
 * the launch refuses such an agent by name: src/workflows/fork/user-memory.ts).
 */
export function definitionMemory(definition: { name: string; memory?: string }, tenant?: string): AgentMemory | undefined {
  const scope = definition.memory;
  // A plugin's agent (`plugin:name`) keeps its memory in `plugin__name`: no `:` in a path a checkout on any system must hold, and no plain agent's name has `_`.
  const agent = definition.name.replace(':', '__');
  if (scope === 'user') return tenant !== undefined ? { scope, agent, tenant } : undefined;
  return scope === 'project' || scope === 'local' ? { scope, agent } : undefined;
}

/** The tools an agent keeps its memory with (the seed turns them on for an agent with a memory: Read, Write and Edit). */
export const MEMORY_TOOLS = ['Read', 'FileWrite', 'FileEdit'] as const;

/**
 * An agent with a memory gets the memory tools its definition's `tools` left out, but only
 * those in `offered`: its caller's tools less what its definition denies (never more than the caller).
 */
export function withMemoryTools<T extends string>(names: readonly T[], offered: readonly T[]): T[] {
  const added = offered.filter((t) => (MEMORY_TOOLS as readonly string[]).includes(t) && !names.includes(t));
  return [...names, ...added];
}
