/**
 * The permission model: one decision per tool call, from the agent's policy (its tool
 * filter and permission mode) and the tool's traits (src/shared/tools/table.ts). It says
 * whether the call may run, what it may write, and whether it must wait for approval. The
 * OS sandbox and the path checks in the activities then enforce the write scope.
 *
 * Pure and workflow-safe: the tool round calls it for every call, the same on every replay.
 */
import type { MemoryScope, WritePolicySpec } from './activity-io';
import type { ToolFilter } from './fork-input';
import type { ToolTraits } from './tools/table';
import { READ_ONLY_TOOLS } from './tools/schemas';

/** What an agent may do, as the permission model reads it off the agent. */
export interface CallPolicy {
  filter: ToolFilter;
  mode: 'default' | 'bubble';
  /** The memory directory pinned at start (autoMem filter). */
  memory?: MemoryScope;
}

/** The decision for one call. */
export type CallDecision =
  | {
      allow: true;
      /** Where the call may write (enforced by the tool activity and the OS sandbox). */
      writePolicy: WritePolicySpec;
      /** The call waits for an operator's (or the parent's) decision before it runs. */
      approval: boolean;
    }
  | { allow: false; message: string };

function memoryPolicy(memory: MemoryScope | undefined): WritePolicySpec {
  return memory ? { kind: 'within', dir: memory.dir, canonicalDir: memory.canonicalDir } : { kind: 'none' };
}

/** Whether a call changes something and so waits for a decision under `bubble` (built-in, routed and MCP tools alike). */
function needsApproval(policy: CallPolicy, tool: ToolTraits): boolean {
  return policy.mode === 'bubble' && tool.home.kind !== 'subagent' && !tool.readOnly;
}

/**
 * Decides one call of `tool` under `policy`. Sub-agent tools are not decided here (the
 * workflow checks their arguments and the tree's limits itself).
 */
export function decideCall(policy: CallPolicy, tool: ToolTraits): CallDecision {
  const filter = policy.filter;
  const approval = needsApproval(policy, tool);
  if (filter === 'allowAll') return { allow: true, writePolicy: { kind: 'workspace' }, approval };
  const memory = typeof filter === 'object' && filter.kind === 'autoMem';
  if (tool.readOnly) return { allow: true, writePolicy: { kind: 'none' }, approval };
  // Bash is offered to read-only and memory agents too: the activity runs it only when the
  // shell classifier says the command just reads (and inside the OS sandbox).
  if (tool.effect === 'shell') return { allow: true, writePolicy: memory ? memoryPolicy(policy.memory) : { kind: 'none' }, approval };
  if (memory && tool.effect === 'files') return { allow: true, writePolicy: memoryPolicy(policy.memory), approval };
  // A service's or an MCP server's tool: only one declared read-only may run here.
  if (tool.effect === 'external') {
    const who = memory ? 'a memory agent' : 'this agent is read-only and';
    return { allow: false, message: `${tool.name} is denied: ${who} may only call tools declared read-only, and ${tool.name} is not. Use a read-only tool instead.` };
  }
  return {
    allow: false,
    message: memory
      ? `${tool.name} is denied: a memory agent may only read, run read-only shell commands, and edit files inside ${filter.memoryDir}.`
      : `${tool.name} is denied: this agent is read-only. Use ${READ_ONLY_TOOLS.join(', ')} or a read-only Bash command instead.`,
  };
}
