/**
 * The permission model: one decision per tool call, from the agent's policy (its tool
 * filter and permission mode) and the tool's traits (src/shared/tools/table.ts). It says
 * whether the call may run, what it may write, whether it runs in the OS sandbox, and
 * whether it must wait for approval. The sandbox and the path checks in the activities then
 * enforce the write scope; what any call may read is the fork's view, decided there.
 *
 * The modes are seed 001's:
 * - `default`, `acceptEdits`: what the filter allows, writes inside the workspace, every
 *   shell command in the sandbox, nothing asked (forkflow has nobody to ask unattended: the
 *   filter and the sandbox are its rules). A named agent without a mode is `acceptEdits`.
 * - `plan`: read-only whatever the filter: read tools (routed and MCP tools declared
 *   read-only included), and Bash in a sandbox where nothing is writable; file writes and
 *   other service or MCP tools are refused.
 * - `bubble`: as `default`, but file writes and service or MCP tools not declared read-only
 *   wait for a decision (an operator, a client, or whoever decides for the tree); shell
 *   commands in the sandbox run without asking (they are contained), those that could not be
 *   sandboxed wait too. Every fork is `bubble`.
 * - `bypassPermissions`: nothing asked and Bash outside the sandbox, only with the starting
 *   caller's explicit `allowBypassPermissions`.
 *
 * Pure and workflow-safe: the tool round calls it for every call, the same on every replay.
 */
import type { MemoryScope, WritePolicySpec } from './activity-io';
import type { PermissionMode } from './agents';
import type { ToolFilter } from './fork-input';
import type { ToolTraits } from './tools/table';
import { READ_ONLY_TOOLS } from './tools/schemas';

export type { PermissionMode } from './agents';

/** What an agent may do, as the permission model reads it off the agent. */
export interface CallPolicy {
  filter: ToolFilter;
  mode: PermissionMode;
  /** The memory directory pinned at start (autoMem filter). */
  memory?: MemoryScope;
  /**
   * Under `bubble`, a shell command that runs in the sandbox needs no approval. False for
   * runs recorded before (they asked for every Bash call, and replay as recorded).
   */
  sandboxedShellAsksNothing?: boolean;
}

/** The decision for one call. */
export type CallDecision =
  | {
      allow: true;
      /** Where the call may write (enforced by the tool activity and the OS sandbox). */
      writePolicy: WritePolicySpec;
      /** The call waits for an operator's (or the parent's) decision before it runs. */
      approval: boolean;
      /**
       * `sandbox`: a shell command runs in the OS sandbox (`required`: and only there — it
       * was let through unasked because it is contained); `bypass`: outside it (bypassPermissions).
       */
      sandbox: 'sandbox' | 'required' | 'bypass';
    }
  | { allow: false; message: string };

function memoryPolicy(memory: MemoryScope | undefined): WritePolicySpec {
  return memory ? { kind: 'within', dir: memory.dir, canonicalDir: memory.canonicalDir } : { kind: 'none' };
}

/**
 * Whether a call waits for a decision under `bubble`: every tool that changes something
 * (built-in, routed and MCP tools alike), except a shell command kept in the sandbox.
 */
function needsApproval(policy: CallPolicy, tool: ToolTraits): boolean {
  if (policy.mode !== 'bubble' || tool.home.kind === 'subagent' || tool.readOnly) return false;
  return !(tool.effect === 'shell' && policy.sandboxedShellAsksNothing === true);
}

function allowed(policy: CallPolicy, tool: ToolTraits, writePolicy: WritePolicySpec): CallDecision {
  const approval = needsApproval(policy, tool);
  const sandbox = policy.mode === 'bypassPermissions' ? 'bypass' : policy.mode === 'bubble' && tool.effect === 'shell' && !approval ? 'required' : 'sandbox';
  return { allow: true, writePolicy, approval, sandbox };
}

/**
 * Decides one call of `tool` under `policy`. Sub-agent tools are not decided here (the
 * workflow checks their arguments and the tree's limits itself).
 */
export function decideCall(policy: CallPolicy, tool: ToolTraits): CallDecision {
  const filter = policy.filter;
  if (policy.mode === 'plan') {
    if (tool.readOnly) return allowed(policy, tool, { kind: 'none' });
    // A plan agent's shell runs where nothing is writable: it may look at anything the sandbox shows.
    if (tool.effect === 'shell') return allowed(policy, tool, { kind: 'none' });
    return { allow: false, message: `${tool.name} is denied: this agent is in plan mode and changes nothing. Use ${READ_ONLY_TOOLS.join(', ')} or Bash to look, and describe the change you would make in your report.` };
  }
  if (filter === 'allowAll') return allowed(policy, tool, { kind: 'workspace' });
  const memory = typeof filter === 'object' && filter.kind === 'autoMem';
  if (tool.readOnly) return allowed(policy, tool, { kind: 'none' });
  // Bash is offered to read-only and memory agents too: it runs in the OS sandbox with
  // nothing (or only the memory directory) writable.
  if (tool.effect === 'shell') return allowed(policy, tool, memory ? memoryPolicy(policy.memory) : { kind: 'none' });
  if (memory && tool.effect === 'files') return allowed(policy, tool, memoryPolicy(policy.memory));
  // A service's or an MCP server's tool: only one declared read-only may run here.
  if (tool.effect === 'external') {
    const who = memory ? 'a memory agent' : 'this agent is read-only and';
    return { allow: false, message: `${tool.name} is denied: ${who} may only call tools declared read-only, and ${tool.name} is not. Use a read-only tool instead.` };
  }
  return {
    allow: false,
    message: memory
      ? `${tool.name} is denied: a memory agent may only read, run shell commands that write nothing but its memory, and edit files inside ${filter.memoryDir}.`
      : `${tool.name} is denied: this agent is read-only. Use ${READ_ONLY_TOOLS.join(', ')} or a read-only Bash command instead.`,
  };
}

/** How strict a mode is: a sub-agent never gets a looser one than its parent (bypass aside, which needs consent). */
const STRICTNESS: Record<PermissionMode, number> = { bypassPermissions: 0, default: 1, acceptEdits: 1, bubble: 2, plan: 3 };

/**
 * A sub-agent's permission mode (seed 001's precedence): a plan parent's children plan;
 * a fork `bubble`; a named or general-purpose agent its definition's mode, `acceptEdits`
 * when it names none, but never looser than its parent's; `bypassPermissions` only when the
 * tree's starting caller allowed it, and then only under a parent that does not ask.
 */
export function childPermissionMode(parent: PermissionMode, child: { kind: 'fork' } | { kind: 'agent'; definitionMode?: PermissionMode }, bypassAllowed: boolean): PermissionMode {
  if (parent === 'plan') return 'plan';
  if (child.kind === 'fork') return 'bubble';
  const wanted = child.definitionMode ?? 'acceptEdits';
  if (wanted === 'bypassPermissions') return bypassAllowed && STRICTNESS[parent] <= STRICTNESS.acceptEdits ? 'bypassPermissions' : parent === 'bubble' ? 'bubble' : 'acceptEdits';
  return STRICTNESS[wanted] >= STRICTNESS[parent] ? wanted : parent;
}
