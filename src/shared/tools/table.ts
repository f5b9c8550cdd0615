/**
 * One tool table per agent: for every tool name the agent may call, where the call is
 * carried out and what it is (read-only? safe to run twice? what can it change?). The tool
 * round (src/workflows/fork/tool-round.ts) consults it for every call, and the permission
 * model (src/shared/tools/permissions.ts) decides from these traits alone, so a built-in tool, a
 * service's routed tool and an MCP server's tool are judged by the same rules.
 *
 * Pure and workflow-safe: the table is derived from the fork's input (and, for tools whose
 * list is fetched, from what was recorded), the same on every replay.
 */
import { isSubAgentTool, LIST_AGENTS } from '../tree/agent-tools';
import { ANSWER_APPROVAL } from '../tree/parent-approvals';
import { mcpToolNature, type McpServerRecord } from './mcp';
import { routeFor, type Route } from './routes';
import { isBuiltinTool, type BuiltinToolName } from './schemas';

/** Where a call of the tool is carried out. */
export type ToolHome =
  /** forkflow's own tools: the `runTool` activity on the workspace's task queue. */
  | { kind: 'builtin' }
  /** Agent, SendMessage, TaskOutput, TaskStop, Skill: the workflow itself (children, signals). */
  | { kind: 'subagent' }
  /** A service's tool: one `forkflow.callTool` activity on the route's task queue (./service-contract.ts). */
  | { kind: 'service'; route: Route }
  /** A tool of an MCP server: `mcpCall` on the worker holding the session (stdio) or any worker (HTTP). */
  | { kind: 'mcp'; server: string; tool: string };

/**
 * What a tool can change, for the permission model:
 * - `none`: nothing (reads);
 * - `files`: files, through a path the call names (checked against the agent's write scope);
 * - `shell`: anything a shell can (contained by the classifier and the OS sandbox);
 * - `agents`: other agents of the tree (children, messages);
 * - `external`: something outside forkflow's reach (a service's system, an MCP server).
 */
export type ToolEffect = 'none' | 'files' | 'shell' | 'agents' | 'external';

export interface ToolTraits {
  name: string;
  home: ToolHome;
  /** Changes nothing: allowed to read-only and plan agents, never waits for approval, may run side by side. */
  readOnly: boolean;
  /** Running it again after an attempt that may have partly run is the same as running it once. */
  idempotent: boolean;
  effect: ToolEffect;
  /** May destroy or overwrite what it changes (MCP's destructiveHint; shown when asking for approval). */
  destructive?: boolean;
}

const BUILTIN_TRAITS: Record<BuiltinToolName, Omit<ToolTraits, 'name' | 'home'>> = {
  Read: { readOnly: true, idempotent: true, effect: 'none' },
  Glob: { readOnly: true, idempotent: true, effect: 'none' },
  Grep: { readOnly: true, idempotent: true, effect: 'none' },
  // Its effect is decided per command (classifier, sandbox); a second run of a partly run one is not the same.
  Bash: { readOnly: false, idempotent: false, effect: 'shell' },
  // A second run finds the text already replaced.
  FileEdit: { readOnly: false, idempotent: false, effect: 'files' },
  // A whole-file write ends in the same file.
  FileWrite: { readOnly: false, idempotent: true, effect: 'files' },
};

/** The traits of a tool forkflow knows by name (built-in and sub-agent tools); undefined for any other name. */
export function knownToolTraits(name: string): ToolTraits | undefined {
  if (isBuiltinTool(name)) return { name, home: { kind: 'builtin' }, ...BUILTIN_TRAITS[name] };
  // The sub-agent tools check their own arguments and the tree's limits in the workflow.
  if (isSubAgentTool(name)) return { name, home: { kind: 'subagent' }, readOnly: false, idempotent: false, effect: 'agents' };
  return undefined;
}

/** The traits of a routed tool, as its route declares them (idempotent defaults to read-only). */
export function serviceToolTraits(name: string, route: Route): ToolTraits {
  return { name, home: { kind: 'service', route }, readOnly: route.readOnly, idempotent: route.idempotent ?? route.readOnly, effect: route.readOnly ? 'none' : 'external' };
}

/** The traits of each tool of the recorded MCP servers, by the name the model sees. */
function mcpTraits(records: readonly McpServerRecord[], overrides: (server: string) => Record<string, { readOnly?: boolean; idempotent?: boolean }> | undefined): Map<string, ToolTraits> {
  const out = new Map<string, ToolTraits>();
  for (const r of records) {
    if (!r.ok) continue;
    const own = overrides(r.server);
    for (const t of r.tools) {
      const nature = mcpToolNature(t, own?.[t.tool]);
      out.set(t.name, { name: t.name, home: { kind: 'mcp', server: r.server, tool: t.tool }, readOnly: nature.readOnly, idempotent: nature.idempotent, effect: nature.readOnly ? 'none' : 'external', destructive: nature.destructive });
    }
  }
  return out;
}

/**
 * An agent's tool table: the traits of each tool it may call, looked up by name. Built once
 * per run from the agent's input (its routes) and the MCP tool lists recorded at its start;
 * unknown names are `undefined` (the call is refused, naming the tools that exist). A name
 * forkflow knows (built-in, sub-agent) wins over an MCP tool, which wins over a route.
 */
export class ToolTable {
  private readonly mcp: Map<string, ToolTraits>;

  constructor(
    private readonly routes: readonly Route[] = [],
    mcp: { records: readonly McpServerRecord[]; overrides?: (server: string) => Record<string, { readOnly?: boolean; idempotent?: boolean }> | undefined } = { records: [] },
  ) {
    this.mcp = mcpTraits(mcp.records, mcp.overrides ?? (() => undefined));
  }

  lookup(name: string): ToolTraits | undefined {
    const known = knownToolTraits(name);
    // ListAgents and AnswerApproval came later than routes: a service's tool of that name keeps it.
    if (known && name !== LIST_AGENTS && name !== ANSWER_APPROVAL) return known;
    const mcp = this.mcp.get(name);
    if (mcp) return mcp;
    const route = routeFor(this.routes, name);
    return route ? serviceToolTraits(name, route) : known;
  }
}
