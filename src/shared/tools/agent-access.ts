/**
 * What an agent may use and start: tool access policies (Meerkat's `inherit | allow_list |
 * deny_list`) and how they are read, the tools and MCP servers a named agent gets from its
 * caller's, and the deny rules for agent types. Pure and workflow-safe, like the definitions
 * themselves (src/shared/agents/agents.ts).
 */
import { z } from 'zod';
import { toolNameSchema, type AgentDefinition } from '../agents/agents';
import { plainIssues } from '../base/plain-issues';
import { schemaOnce } from '../base/schema-once';
import type { McpServers } from './mcp';

type ToolFields = Pick<AgentDefinition, 'tools' | 'disallowedTools' | 'allowedTools'>;

/** Which of the parent's tools a child may use (Meerkat's `inherit | allow_list | deny_list`). */
export type ToolAccessPolicy =
  | { mode: 'inherit' }
  | { mode: 'allow_list'; tools: string[] }
  | { mode: 'deny_list'; tools: string[] };

/** Validates a {@link ToolAccessPolicy}; unknown fields are refused. */
export const toolAccessPolicySchema: z.ZodType<ToolAccessPolicy> = schemaOnce('tools/agent-access#toolAccessPolicySchema', () => z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('inherit') }),
  z.strictObject({ mode: z.literal('allow_list'), tools: z.array(toolNameSchema) }),
  z.strictObject({ mode: z.literal('deny_list'), tools: z.array(toolNameSchema) }),
]));

/** The outcome of {@link parseToolAccessPolicy}. */
export type ToolAccessParse = { ok: true; policy: ToolAccessPolicy } | { ok: false; error: string };

const POLICY_SHAPES = '{"mode":"inherit"}, {"mode":"allow_list","tools":["Read","Grep"]} or {"mode":"deny_list","tools":["Bash"]}';

/**
 * Reads a tool access policy given as an object or as a JSON string (models often send
 * nested objects as strings). Absent (`undefined`/`null`) means `inherit`. Never throws:
 * a bad value gives `{ ok: false, error }` with a message the model can act on.
 */
export function parseToolAccessPolicy(value: unknown): ToolAccessParse {
  if (value === undefined || value === null) return { ok: true, policy: { mode: 'inherit' } };
  let candidate: unknown = value;
  if (typeof value === 'string') {
    try {
      candidate = JSON.parse(value) as unknown;
    } catch {
      // Not the engine's parse message: its wording changes between Node versions, and this
      // text can reach a model request, whose bytes should not depend on the worker's Node.
      const shown = value.length > 80 ? `${value.slice(0, 77)}...` : value;
      return { ok: false, error: `The tool access policy is a string but not valid JSON (${JSON.stringify(shown)}). Send ${POLICY_SHAPES}.` };
    }
  }
  const parsed = toolAccessPolicySchema.safeParse(candidate);
  if (parsed.success) return { ok: true, policy: parsed.data };
  return { ok: false, error: `Invalid tool access policy (${plainIssues(parsed.error, 'policy').join('; ')}). Send ${POLICY_SHAPES}.` };
}

/** Whether a tool-list entry (`Name`, `*`, `prefix*`) covers a tool. */
function covers(entry: string, tool: string): boolean {
  return entry.endsWith('*') ? tool.startsWith(entry.slice(0, -1)) : entry === tool;
}

/** Whether `type` (an agent type: a definition's name, general-purpose, a skill's name) is named by a deny rule (a name or `prefix*`, any case). */
export function agentTypeDenied(type: string, denied: readonly string[] | undefined): boolean {
  // Any case: a rule written `Code-*` must not deny nothing because names are lower-case.
  return denied?.some((entry) => covers(entry.toLowerCase(), type.toLowerCase())) ?? false;
}

/**
 * The definitions a tree lets its agents start (seed 001's `filterDeniedAgents`): those no
 * `deniedAgentTypes` rule names. The Agent and Skill tools list only these; a call for a
 * denied type is refused by name (agent-launch.ts).
 */
export function permittedAgents(config: { agents: readonly AgentDefinition[]; deniedAgentTypes?: readonly string[] | undefined }): AgentDefinition[] {
  const denied = config.deniedAgentTypes;
  return denied?.length ? config.agents.filter((a) => !agentTypeDenied(a.name, denied)) : [...config.agents];
}

/**
 * The names in `available` that the policy allows, in `available`'s order (so tool
 * definitions derived from it keep stable bytes).
 */
export function applyToolAccess(policy: ToolAccessPolicy, available: readonly string[]): string[] {
  switch (policy.mode) {
    case 'inherit':
      return [...available];
    case 'allow_list':
      return available.filter((tool) => policy.tools.some((entry) => covers(entry, tool)));
    case 'deny_list':
      return available.filter((tool) => !policy.tools.some((entry) => covers(entry, tool)));
  }
}

/**
 * The tools a named agent gets from its parent's: `tools` and `allowedTools` narrow the
 * list (absent = no narrowing), then `disallowedTools` removes from it. Order follows
 * `parentTools`. Whether sub-agent tools are withheld (nesting off) is the caller's rule.
 */
export function agentToolsFor(definition: ToolFields, parentTools: readonly string[]): string[] {
  let tools = [...parentTools];
  for (const allow of [definition.tools, definition.allowedTools]) {
    if (allow) tools = applyToolAccess({ mode: 'allow_list', tools: allow }, tools);
  }
  if (definition.disallowedTools) tools = applyToolAccess({ mode: 'deny_list', tools: definition.disallowedTools }, tools);
  return tools;
}

/** Whether a definition's tool lists let it use any tool of MCP server `server` (`mcp__<server>__…`). */
function agentAllowsServer(definition: ToolFields, server: string): boolean {
  const prefix = `mcp__${server}__`;
  const reaches = (entry: string) => (entry.endsWith('*') ? prefix.startsWith(entry.slice(0, -1)) || entry.startsWith(prefix) : entry.startsWith(prefix));
  for (const allow of [definition.tools, definition.allowedTools]) if (allow && !allow.some(reaches)) return false;
  // Denied whole: `mcp__<server>__*` (or a wider prefix) among the disallowed.
  if (definition.disallowedTools?.some((d) => d.endsWith('*') && prefix.startsWith(d.slice(0, -1)))) return false;
  return true;
}

/**
 * A named agent's MCP servers: its caller's that its tool lists allow (a name in its list
 * keeps one explicitly), then its own (which win over a caller's of the same name).
 */
export function agentMcpServers(definition: Pick<AgentDefinition, 'mcpServers' | 'tools' | 'allowedTools' | 'disallowedTools'>, inherited: McpServers | undefined): McpServers | undefined {
  const out: McpServers = {};
  for (const [name, config] of Object.entries(inherited ?? {})) if (agentAllowsServer(definition, name)) out[name] = config;
  const own = definition.mcpServers;
  if (own && !Array.isArray(own)) Object.assign(out, own);
  for (const entry of Array.isArray(own) ? own : []) {
    if (typeof entry === 'string') {
      const config = inherited?.[entry];
      if (config) out[entry] = config;
    } else Object.assign(out, entry);
  }
  return Object.keys(out).length ? out : undefined;
}
