/**
 * Whether this worker starts a stdio MCP server a start input asks for. A stdio server is a
 * program of the worker's user, outside the OS sandbox, so it starts only with the operator's
 * consent (../consent.ts):
 * - a rule of the allow-list matches it: the same program (the config's command, found on the
 *   worker's PATH when it is a bare name, compared with the rule's by canonical path), each
 *   argument matching the rule's pattern for it (`...` at the end lets more follow), every
 *   `env` name the config sets named by the rule (`env:NAME`, `env:PREFIX_*`), and a `cwd`, if
 *   the config names one, allowed by the rule (`cwd:/dir`, `cwd:/dir/*`, `cwd:*`); the program
 *   then starts by the path that matched, never by a name looked up again;
 * - or the config is, field for field, a stdio server an agent definition in one of the
 *   operator's agent directories declares (the operator wrote it there).
 * A command or argument naming a `${VAR}` is refused before anything else (env.ts: arguments are
 * public in `ps`), so no shared value is expanded into them, nor into this refusal's message.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../../shared/base/hash';
import type { McpStdioServer } from '../../shared/tools/mcp';
import { CONSENT_SETTINGS, type McpCommandRule, type OperatorConsent } from '../consent';
import { literalArgument, McpConfigVariableError } from './env';

/** A stdio server the worker may start (`command`: what to spawn), or why not. */
export type McpLaunch = { ok: true; command: string; by: string } | { ok: false; message: string };

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `command` as a program path: itself when absolute, else the first executable on PATH's absolute folders. */
export function resolveProgram(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (path.isAbsolute(command)) return executable(command) ? command : undefined;
  if (command.includes('/')) return undefined; // relative to an unknown directory: never
  for (const dir of (env.PATH ?? '').split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, command);
    if (executable(file)) return file;
  }
  return undefined;
}

function canonical(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** Whether one argument matches one pattern: a literal, `*`, or `prefix*`. */
export function argMatches(pattern: string, arg: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return arg.startsWith(pattern.slice(0, -1));
  return pattern === arg;
}

function argsMatch(rule: McpCommandRule, args: readonly string[]): boolean {
  if (args.length < rule.args.length) return false;
  if (args.length > rule.args.length && !rule.moreArgs) return false;
  return rule.args.every((p, i) => argMatches(p, args[i]!));
}

function cwdAllowed(rule: McpCommandRule, cwd: string | undefined): boolean {
  if (cwd === undefined) return true;
  const dir = canonical(cwd) ?? path.resolve(cwd);
  return rule.cwd.some((p) => {
    if (p === '*') return true;
    if (p.endsWith('/*')) {
      const base = canonical(p.slice(0, -2)) ?? p.slice(0, -2);
      return dir === base || dir.startsWith(`${base}/`);
    }
    return dir === (canonical(p) ?? p);
  });
}

/** What the rule does not allow of this request, or undefined when it allows it all. */
function ruleMismatch(rule: McpCommandRule, program: string, args: readonly string[], envNames: readonly string[], cwd: string | undefined): string | undefined {
  if (canonical(rule.command) !== canonical(program)) return 'another program';
  if (!argsMatch(rule, args)) return 'other arguments';
  const unnamed = envNames.filter((n) => !rule.env.some((p) => argMatches(p, n)));
  if (unnamed.length > 0) return `environment ${unnamed.join(', ')}`;
  if (!cwdAllowed(rule, cwd)) return `working directory ${cwd}`;
  return undefined;
}

const sameServer = (a: McpStdioServer, b: McpStdioServer) =>
  canonicalJson([a.command, a.args ?? [], a.env ?? {}, a.cwd ?? null]) === canonicalJson([b.command, b.args ?? [], b.env ?? {}, b.cwd ?? null]);

/** The rule an operator would add to allow exactly this request (for the refusal). */
function suggestedRule(program: string, args: readonly string[], envNames: readonly string[], cwd: string | undefined): string {
  const words = [...envNames.map((n) => `env:${n}`), ...(cwd ? [`cwd:${cwd}`] : []), program, ...args];
  return words.some((w) => /\s|;/.test(w) || w === '...') ? JSON.stringify(words) : words.join(' ');
}

/**
 * Decides whether stdio server `server` (`config`) may start on this worker.
 *
 * @example
 * const launch = await mcpLaunchDecision('fs', { command: 'node', args: ['/opt/mcp/fs.js', '/data'] }, consent);
 * if (!launch.ok) return { server: 'fs', ok: false, error: launch.message };
 */
export async function mcpLaunchDecision(server: string, config: McpStdioServer, consent: OperatorConsent, env: NodeJS.ProcessEnv = process.env): Promise<McpLaunch> {
  let command: string;
  let args: string[];
  try {
    command = literalArgument(config.command);
    args = (config.args ?? []).map(literalArgument);
  } catch (err) {
    if (err instanceof McpConfigVariableError) return { ok: false, message: `MCP server "${server}" was not started: ${err.message}` };
    throw err;
  }
  const declared = consent.agentServers ? await consent.agentServers() : [];
  if (declared.some((d) => sameServer(d, config))) return { ok: true, command, by: 'an agent definition in the operator\'s agent directories' };
  const envNames = Object.keys(config.env ?? {}).sort();
  const program = resolveProgram(command, env);
  const head = `MCP server "${server}" was not started: it runs ${JSON.stringify([command, ...args].join(' '))} as this worker's user, outside the OS sandbox, and`;
  const how = `, or declare the server in an agent definition in a directory of ${CONSENT_SETTINGS.agentDirs}.`;
  if (!program) {
    return { ok: false, message: `${head} ${JSON.stringify(command)} is not an executable ${path.isAbsolute(command) ? 'file' : 'on the worker\'s PATH'}; the worker's operator allows programs by absolute path in ${CONSENT_SETTINGS.mcpCommands}${how}` };
  }
  const misses: string[] = [];
  for (const rule of consent.mcpCommands) {
    const miss = ruleMismatch(rule, program, args, envNames, config.cwd);
    if (miss === undefined) return { ok: true, command: program, by: `rule "${rule.text}"` };
    if (miss !== 'another program') misses.push(`"${rule.text}" allows that program, but not ${miss}`);
  }
  const none = consent.mcpCommands.length === 0 ? "this worker's operator allows no stdio MCP command" : "this worker's operator has not allowed it";
  return {
    ok: false,
    message: `${head} ${none}${misses.length ? ` (${misses.join('; ')})` : ''}. To allow it, the operator adds ${JSON.stringify(suggestedRule(program, args, envNames, config.cwd))} to ${CONSENT_SETTINGS.mcpCommands}${how}`,
  };
}
