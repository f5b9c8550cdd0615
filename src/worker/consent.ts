/**
 * The operator's consent, from the worker's own configuration: what a start input may make
 * this worker run (src/activities/consent.ts says why a start input only asks). Nothing is
 * allowed by default.
 *
 * - FORKFLOW_MCP_COMMANDS (rules separated by newlines or `;`), or `forkflow worker
 *   --mcp-command <rule>` (repeatable): the stdio MCP commands it may start. A rule is words
 *   separated by spaces — options first (`env:NAME` or `env:PREFIX_*`: a variable the start
 *   input may set; `cwd:/dir`, `cwd:/dir/*` or `cwd:*`: a working directory it may name), then
 *   the program's absolute path, then one pattern per argument (a literal, `*` for any one
 *   argument, `prefix*`), and `...` last when more arguments may follow. A rule whose words hold
 *   spaces is written as a JSON array of the same words. A program inside a workspace this
 *   worker serves is refused: a fork could replace it.
 * - FORKFLOW_AGENT_DIRS (absolute directories separated by `:`), or `--agent-dir <dir>`
 *   (repeatable): agent definitions whose stdio MCP servers start as written there. Never a
 *   directory a fork can write: outside every workspace root, or inside the `.forkflow/` folder
 *   at the top of one (which the sandbox hides from every fork).
 * - FORKFLOW_ALLOW_BYPASS_PERMISSIONS=1, or `--allow-bypass-permissions`: an agent in
 *   `bypassPermissions` mode (its starter set `allowBypassPermissions`) runs Bash outside the
 *   OS sandbox. Otherwise its Bash calls are refused.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { McpCommandRule, OperatorConsent } from '../activities/consent';
import { loadAgentSources } from '../activities/agents';
import { canonicalish, within } from '../activities/tools/sandbox';
import { envSetting } from '../shared/wire/env-settings';
import { isHttpServer, type McpServerConfig, type McpStdioServer } from '../shared/tools/mcp';

/** A consent setting that cannot be used: the message names it and says what is wrong. */
export class InvalidConsentError extends Error {
  override name = 'InvalidConsentError';
}

const ENV_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

function words(spec: string): string[] {
  const text = spec.trim();
  if (!text.startsWith('[')) return text.split(/\s+/).filter(Boolean);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new InvalidConsentError(`MCP command rule ${text} is not a JSON array of strings (${(err as Error).message})`);
  }
  if (!Array.isArray(parsed) || !parsed.every((w) => typeof w === 'string')) throw new InvalidConsentError(`MCP command rule ${text} must be a JSON array of strings`);
  return parsed;
}

/**
 * One allow-list rule from its text.
 *
 * @example
 * parseMcpCommandRule('env:GITHUB_TOKEN /usr/bin/node /opt/mcp/github/index.js ...')
 * parseMcpCommandRule('["/opt/mcp/bin/docs", "--root", "/srv/my docs"]')
 */
export function parseMcpCommandRule(spec: string): McpCommandRule {
  const all = words(spec);
  const env: string[] = [];
  const cwd: string[] = [];
  let i = 0;
  for (; i < all.length && !all[i]!.startsWith('/'); i++) {
    const w = all[i]!;
    if (w.startsWith('env:') && ENV_PATTERN.test(w.slice(4))) env.push(w.slice(4));
    else if (w.startsWith('cwd:') && (w === 'cwd:*' || path.isAbsolute(w.slice(4)))) cwd.push(w.slice(4));
    else throw new InvalidConsentError(`MCP command rule "${spec.trim()}": ${JSON.stringify(w)} is neither an option (env:NAME, cwd:/dir) nor the program's absolute path`);
  }
  const command = all[i];
  if (command === undefined) throw new InvalidConsentError(`MCP command rule "${spec.trim()}" names no program: give its absolute path (e.g. /usr/bin/node /opt/mcp/server.js)`);
  const args = all.slice(i + 1);
  const moreArgs = args[args.length - 1] === '...';
  if (moreArgs) args.pop();
  if (args.includes('...')) throw new InvalidConsentError(`MCP command rule "${spec.trim()}": "..." may only end a rule`);
  return { command: path.normalize(command), args, moreArgs, env, cwd, text: spec.trim() };
}

/** Whether forks could write `p` (canonical): it lies in a workspace root, outside the hidden `.forkflow/` at a root's top. */
function forkWritable(p: string, roots: readonly string[]): boolean {
  const inRoot = roots.filter((r) => within(p, r));
  if (inRoot.length === 0) return false;
  // A `.forkflow/` is hidden at the top of a fork's workspace; a fork of an enclosing root would see this one.
  const outermost = inRoot.filter((r) => !roots.some((o) => o !== r && within(r, o)));
  return !outermost.some((r) => within(p, path.join(r, '.forkflow')));
}

function checkRule(rule: McpCommandRule, roots: readonly string[]): McpCommandRule {
  if (!existsSync(rule.command)) throw new InvalidConsentError(`MCP command rule "${rule.text}": ${rule.command} does not exist on this worker`);
  const real = realpathSync(rule.command);
  if (roots.some((r) => within(real, r) || within(rule.command, r))) {
    throw new InvalidConsentError(`MCP command rule "${rule.text}": ${rule.command} lies in a workspace this worker serves, where a fork could replace it; install the program outside the workspace roots`);
  }
  return rule;
}

function checkAgentDir(dir: string, roots: readonly string[]): string {
  if (!path.isAbsolute(dir)) throw new InvalidConsentError(`agent directory ${JSON.stringify(dir)} (FORKFLOW_AGENT_DIRS, --agent-dir) must be absolute`);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InvalidConsentError(`agent directory ${dir} (FORKFLOW_AGENT_DIRS, --agent-dir) is not a directory on this worker`);
  const real = realpathSync(dir);
  if (forkWritable(real, roots)) {
    throw new InvalidConsentError(`agent directory ${dir} lies in a workspace this worker serves, where forks can write: the worker would start what a fork declared there. Name a directory outside the workspace roots, or inside the .forkflow/ folder at the top of one`);
  }
  return real;
}

/** Stdio servers declared by the definitions in `dirs` (a directory that cannot be read declares none). */
export async function agentDirServers(dirs: readonly string[]): Promise<McpStdioServer[]> {
  if (dirs.length === 0) return [];
  const loaded = await loadAgentSources(dirs).catch(() => ({ agents: [] }));
  const configs: McpServerConfig[] = [];
  for (const agent of loaded.agents) {
    const servers = agent.mcpServers;
    if (!servers) continue;
    const entries = Array.isArray(servers) ? servers.flatMap((e) => (typeof e === 'string' ? [] : Object.values(e))) : Object.values(servers);
    configs.push(...entries);
  }
  return configs.filter((c): c is McpStdioServer => !isHttpServer(c));
}

export interface ConsentFlags {
  /** `--mcp-command` rules (added to FORKFLOW_MCP_COMMANDS). */
  mcpCommands?: readonly string[];
  /** `--agent-dir` directories (added to FORKFLOW_AGENT_DIRS). */
  agentDirs?: readonly string[];
  /** `--allow-bypass-permissions`. */
  allowBypassPermissions?: boolean;
}

/**
 * This worker's consent from its flags and environment, checked against the workspace roots
 * it serves. A malformed or unsafe setting throws: a typo must not quietly mean "nothing", nor
 * a fork-writable path mean "trusted".
 */
export function operatorConsent(flags: ConsentFlags, roots: readonly string[], env: NodeJS.ProcessEnv = process.env): OperatorConsent {
  const canonicalRoots = roots.map(canonicalish);
  const specs = [...(envSetting(env, 'FORKFLOW_MCP_COMMANDS') ?? '').split(/[\n;]/), ...(flags.mcpCommands ?? [])].map((s) => s.trim()).filter(Boolean);
  const mcpCommands = specs.map((s) => checkRule(parseMcpCommandRule(s), canonicalRoots));
  const dirs = [...(envSetting(env, 'FORKFLOW_AGENT_DIRS') ?? '').split(':'), ...(flags.agentDirs ?? [])].map((d) => d.trim()).filter(Boolean).map((d) => checkAgentDir(d, canonicalRoots));
  const bypass = envSetting(env, 'FORKFLOW_ALLOW_BYPASS_PERMISSIONS')?.trim();
  if (bypass && !['0', '1', 'true', 'false'].includes(bypass)) throw new InvalidConsentError(`FORKFLOW_ALLOW_BYPASS_PERMISSIONS must be 1 or 0, got ${JSON.stringify(bypass)}`);
  return {
    mcpCommands,
    ...(dirs.length > 0 ? { agentServers: () => agentDirServers(dirs) } : {}),
    allowBypassPermissions: flags.allowBypassPermissions === true || bypass === '1' || bypass === 'true',
  };
}

/** One line for the worker's start: what its operator allows (nothing, or which commands, directories, bypass). */
export function describeConsent(consent: OperatorConsent): string {
  const parts = [
    consent.mcpCommands.length ? `${consent.mcpCommands.length} stdio MCP command rule(s)` : 'no stdio MCP command',
    consent.agentServers ? 'servers of the operator\'s agent directories' : '',
    consent.allowBypassPermissions ? 'Bash outside the sandbox for bypassPermissions' : 'no bypassPermissions',
  ].filter(Boolean);
  return `Operator consent: ${parts.join(', ')}`;
}
