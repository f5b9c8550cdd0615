/**
 * The flags that make an autoDream configuration (shared by `dream run` and `dream schedule
 * create`), turned into the JSON the workflow takes; validation itself is the config's zod
 * schema, so the CLI and the workflow can never disagree.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { DreamConfigInput, ForkflowClient } from '../../client';
import { CliError, EXIT } from '../exit';
import { withClient, type GlobalOptions } from './agents';

export interface DreamConfigFlags {
  scope: string;
  config?: string;
  memoryDir?: string;
  minHours?: string;
  minSessions?: string;
  scanThrottle?: string;
  forkTimeout?: string;
  delivery?: string;
  lockStaleGrace?: string;
  indexFile?: string;
  maxIndexLines?: string;
  maxSessions?: string;
  maxTurns?: string;
  maxTokens?: string;
  model?: string;
  manual?: boolean;
  disabled?: boolean;
  extraInstructions?: string;
  workspace?: string;
  workspaceQueue?: string;
  stateDir?: string;
}

/** Adds the configuration flags to a command. */
export function addDreamConfigOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--scope <scope>', 'memory scope (letters, digits, . _ -)')
    .option('--config <file>', 'JSON configuration (autoDreamWorkflow input); flags override it')
    .option('--memory-dir <dir>', 'memory directory (absolute path on the worker)')
    .option('--min-hours <n>', 'hours since the last consolidation (default 24, at least 1)')
    .option('--min-sessions <n>', 'sessions since the last consolidation (default 5, at least 1)')
    .option('--scan-throttle <duration>', 'at most one session scan per this (default 10m)')
    .option('--fork-timeout <duration>', 'limit of the consolidation fork (default 24h batched, 15m interactive; at least 10s)')
    .option('--delivery <mode>', 'the fork\'s model calls: batch (default: Message Batches, half price) or interactive')
    .option('--lock-stale-grace <duration>', 'a lock holder older than fork timeout + this is taken over (default 10m)')
    .option('--index-file <name>', 'index file name in the memory directory (default MEMORY.md)')
    .option('--max-index-lines <n>', 'the index is kept at most this long (default 200)')
    .option('--max-sessions <n>', 'session transcripts staged for the fork (default 20)')
    .option('--max-turns <n>', "the fork's maximum turns (default 40)")
    .option('--max-tokens <n>', "the fork's token budget (default 200000)")
    .option('--model <model>', 'model of the consolidation fork')
    .option('--manual', 'skip the time, throttle and session gates')
    .option('--disabled', 'configure the scope as disabled (runs end skipped)')
    .option('--extra-instructions <text>', 'appended to the consolidation prompt (tests, one-off steering)')
    .option('--workspace <dir>', 'workspace root on the worker that owns the memory directory')
    .option('--workspace-queue <queue>', "task queue of that worker (file work goes there)")
    .option('--state-dir <dir>', 'state and staging folder (default <workspace>/.forkflow/dream/<scope>)');
}

function number(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new CliError(`${flag} must be a number, got "${value}"`, EXIT.usage);
  return n;
}

function readJson(file: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new CliError(`Cannot read the configuration from ${file}: ${(err as Error).message}`, EXIT.usage);
  }
}

/** The configuration from a file (if any) and the flags; unset flags leave the file's values. */
export function dreamConfigFrom(flags: DreamConfigFlags): DreamConfigInput {
  const cfg: Record<string, unknown> = flags.config ? readJson(flags.config) : {};
  const set = (key: string, value: unknown) => {
    if (value !== undefined) cfg[key] = value;
  };
  set('memoryScope', flags.scope);
  set('memoryDir', flags.memoryDir);
  set('minHours', number('--min-hours', flags.minHours));
  set('minSessions', number('--min-sessions', flags.minSessions));
  set('scanThrottle', flags.scanThrottle);
  set('forkTimeout', flags.forkTimeout);
  set('delivery', flags.delivery);
  set('lockStaleGrace', flags.lockStaleGrace);
  set('indexFile', flags.indexFile);
  set('maxIndexLines', number('--max-index-lines', flags.maxIndexLines));
  set('maxSessions', number('--max-sessions', flags.maxSessions));
  set('maxTurns', number('--max-turns', flags.maxTurns));
  set('maxTokens', number('--max-tokens', flags.maxTokens));
  set('model', flags.model);
  if (flags.manual) cfg.manual = true;
  if (flags.disabled) cfg.enabled = false;
  set('extraInstructions', flags.extraInstructions);
  set('stateDir', flags.stateDir);
  if (flags.workspace || flags.workspaceQueue) {
    cfg.workspace = { ...(cfg.workspace as object | undefined), ...(flags.workspace ? { root: flags.workspace } : {}), ...(flags.workspaceQueue ? { taskQueue: flags.workspaceQueue } : {}) };
  }
  if (cfg.memoryDir === undefined) throw new CliError('A memory scope needs its directory: --memory-dir <absolute path> (or "memoryDir" in --config).', EXIT.usage);
  return cfg as DreamConfigInput;
}

/**
 * `withClient` under the dream and away commands' name. Their errors (a missing or existing
 * schedule, invalid configuration) become one line and an exit code in main() (errors.ts).
 */
export function withDreamClient<T>(opts: GlobalOptions, fn: (client: ForkflowClient) => Promise<T>): Promise<T> {
  return withClient(opts, fn);
}
