/**
 * The permission model: one decision per tool call, from the agent's policy (its tool
 * filter and permission mode) and the tool's traits (src/shared/tools/table.ts). It says
 * whether the call may run, what it may write, whether it runs in the OS sandbox, and
 * whether it must wait for approval. The sandbox and the path checks in the activities then
 * enforce the write scope; what any call may read is the fork's view, decided there.
 *
 * The modes are seed 001's:
 * - `acceptEdits` (the default when none is given): what the filter allows, writes inside the
 *   workspace, every shell command in the sandbox, nothing asked. A named agent without a mode
 *   is `acceptEdits`.
 * - `default`: asks "per the main rules". For a durable server the main rules are the
 *   operator's: file writes and service or MCP tools not declared read-only wait for a decision
 *   of the agent's own operator (the approval mechanism, approvals.ts), unless the input's
 *   `permissionRules.allow` names the tool; shell commands run unasked but only inside the OS
 *   sandbox (contained; refused on a worker without one). Runs recorded before behaved as
 *   `acceptEdits` and replay so (`defaultAsks` unset).
 * - `plan`: read-only whatever the filter: read tools (routed and MCP tools declared
 *   read-only included), and Bash in a sandbox where nothing is writable; file writes and
 *   other service or MCP tools are refused.
 * - `bubble`: asks as `default` does, but the request goes up: to whoever decides for the
 *   tree (an operator, a client) and, where the tree lets it (`subAgents.parentApprovals`),
 *   to the parent agent. Every fork is `bubble`.
 * - `bypassPermissions`: nothing asked and Bash outside the sandbox, only with the starting
 *   caller's explicit `allowBypassPermissions`.
 *
 * Pure and workflow-safe: the tool round calls it for every call, the same on every replay.
 */
import type { MemoryScope, WritePolicySpec } from '../wire/activity-io';
import type { PermissionMode } from '../agents/agents';
import type { ToolFilter } from '../wire/fork-input';
import type { ToolTraits } from './table';
import { READ_ONLY_TOOLS } from './schemas';

export type { PermissionMode } from '../agents/agents';

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
  /** `default` asks as `bubble` does (runs under the patch that made it so); unset: `default` is `acceptEdits`. */
  defaultAsks?: boolean;
  /** Tools (names or `prefix*`) that never ask: the input's `permissionRules.allow`. */
  allowRules?: readonly string[];
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

/** Whether this mode asks before a change: `bubble`, and `default` where it asks (new runs). */
function asks(policy: CallPolicy): boolean {
  return policy.mode === 'bubble' || (policy.mode === 'default' && policy.defaultAsks === true);
}

/** Whether a rule of `permissionRules.allow` (a name or `prefix*`) names the tool. */
export function allowedByRule(rules: readonly string[] | undefined, name: string): boolean {
  return (rules ?? []).some((r) => (r.endsWith('*') ? name.startsWith(r.slice(0, -1)) : r === name));
}

/**
 * Whether a call waits for a decision under an asking mode: every tool that changes something
 * (built-in, routed and MCP tools alike), except a shell command kept in the sandbox and a tool
 * the input's allow rules name.
 */
function needsApproval(policy: CallPolicy, tool: ToolTraits): boolean {
  if (!asks(policy) || tool.home.kind === 'subagent' || tool.readOnly || allowedByRule(policy.allowRules, tool.name)) return false;
  // `default` is new: it never asked for a sandboxed shell command.
  return !(tool.effect === 'shell' && (policy.sandboxedShellAsksNothing === true || policy.mode === 'default'));
}

function allowed(policy: CallPolicy, tool: ToolTraits, writePolicy: WritePolicySpec): CallDecision {
  const approval = needsApproval(policy, tool);
  const sandbox = policy.mode === 'bypassPermissions' ? 'bypass' : asks(policy) && tool.effect === 'shell' && !approval && !allowedByRule(policy.allowRules, tool.name) ? 'required' : 'sandbox';
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

/**
 * How strict a mode is: a sub-agent never gets a looser one than its parent (bypass aside,
 * which needs consent). `default` asks as `bubble` does where it asks (`defaultAsks`).
 */
function strictness(mode: PermissionMode, defaultAsks: boolean): number {
  const table: Record<PermissionMode, number> = { bypassPermissions: 0, default: defaultAsks ? 2 : 1, acceptEdits: 1, bubble: 2, plan: 3 };
  return table[mode];
}

/**
 * A sub-agent's permission mode (seed 001's precedence): a plan parent's children plan;
 * a fork `bubble`; a named or general-purpose agent its own definition's mode, `acceptEdits`
 * when it names none, applied within its parent's: never looser (a parent that asks has
 * children that ask); `bypassPermissions` only when the tree's starting caller allowed it,
 * and then only under a parent that does not ask. `defaultAsks`: the parent's run is under
 * the patch that made `default` ask (runs recorded before ranked it with `acceptEdits`).
 */
export function childPermissionMode(parent: PermissionMode, child: { kind: 'fork' } | { kind: 'agent'; definitionMode?: PermissionMode }, bypassAllowed: boolean, defaultAsks = false): PermissionMode {
  if (parent === 'plan') return 'plan';
  if (child.kind === 'fork') return 'bubble';
  const rank = (m: PermissionMode) => strictness(m, defaultAsks);
  const wanted = child.definitionMode ?? 'acceptEdits';
  if (wanted === 'bypassPermissions') return bypassAllowed && rank(parent) <= rank('acceptEdits') ? 'bypassPermissions' : rank(parent) >= 2 ? parent : 'acceptEdits';
  return rank(wanted) >= rank(parent) ? wanted : parent;
}
