/**
 * Operator commands on agents: fork, status, send, cancel, list, transcript, result.
 * Each prints a table or short lines for people, or JSON with `--json`.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { DEFAULT_OUTAGE_DEADLINE_MS, ForkflowClient, isEncryptionKeyError, isStorageConfigError, TemporalUnavailableError, type ForkParams, type ForkResult, type OutageRetry } from '../../client';
import { textOf } from '../../shared/messages-api/anthropic';
import type { ForkStatus } from '../../shared/wire/status';
import { durationSchema, toMs } from '../../shared/base/duration';
import { serviceContractJsonSchemas } from '../../shared/tools/service-contract';
import { forkInputJsonSchema } from '../../shared/wire/fork-input-validation';
import { CliError, EXIT } from '../exit';
import { formatUsage, printJson, table, truncate } from '../output';
import { addPointOptions, lineageRows, pointParams, type PointFlags } from './point-flags';
import { envSetting } from '../../shared/wire/env-settings';

export interface GlobalOptions {
  address?: string;
  namespace?: string;
  taskQueue?: string;
  outageDeadline?: string;
  json?: boolean;
  debug?: boolean;
}

/** The context window in one line: size of the newest request, the window, the policy, compactions. */
function contextLine(c: NonNullable<ForkStatus['context']>): string {
  const last = c.boundaries[c.boundaries.length - 1];
  const compactions = c.compactions ? ` · ${c.compactions} compaction${c.compactions === 1 ? '' : 's'}${last ? ` (last before turn ${last.turn}, by ${last.by}, ${last.reason})` : ''} · ${c.tokensSaved} tokens saved` : '';
  return `${c.lastRequestTokens ?? '?'} of ${c.window} tokens · ${c.policy}${compactions}`;
}

/** `--outage-deadline`, else FORKFLOW_OUTAGE_DEADLINE, else the client's default (5 minutes). */
export function outageDeadlineMs(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const [value, source] = opts.outageDeadline !== undefined ? [opts.outageDeadline, '--outage-deadline'] : [envSetting(env, 'FORKFLOW_OUTAGE_DEADLINE'), 'FORKFLOW_OUTAGE_DEADLINE'];
  if (value === undefined || value === '') return undefined;
  if (!durationSchema.safeParse(value).success) throw new CliError(`${source}: expected a duration like 30s, 5m or 0s, got "${value}"`, EXIT.usage);
  return toMs(value);
}

/**
 * Runs `fn` with a connected client whose reads ride out a Temporal outage for the outage
 * deadline. Errors are left to main(), which prints each as one line with its exit code.
 */
export async function withClient<T>(opts: GlobalOptions, fn: (client: ForkflowClient) => Promise<T>): Promise<T> {
  const deadlineMs = outageDeadlineMs(opts);
  // Waiting silently for minutes looks like a hang: say so once on a terminal (every time with --debug).
  let told = false;
  const onRetry = (r: OutageRetry) => {
    if (!opts.debug && (told || !process.stderr.isTTY)) return;
    told = true;
    process.stderr.write(`forkflow: Temporal unreachable (${r.operation}: ${(r.error as Error).message}); retrying for up to ${Math.round((deadlineMs ?? DEFAULT_OUTAGE_DEADLINE_MS) / 1000)} s\n`);
  };
  const outage = { onRetry, ...(deadlineMs !== undefined ? { deadlineMs } : {}) };
  let client: ForkflowClient;
  try {
    client = await ForkflowClient.connect({ address: opts.address, namespace: opts.namespace, taskQueue: opts.taskQueue, outage });
  } catch (err) {
    // A bad key or storage configuration is not a connection problem: main() prints it as a usage error.
    if (err instanceof TemporalUnavailableError || isEncryptionKeyError(err) || isStorageConfigError(err)) throw err;
    throw new CliError(`Cannot connect to Temporal (${(err as Error).message}). Start one with \`forkflow dev\`, or set TEMPORAL_ADDRESS / --address.`, EXIT.unavailable);
  }
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

const positiveInt = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${name} must be a non-negative integer, got "${v}"`, EXIT.usage);
  return n;
};

function printResult(result: ForkResult, json?: boolean): void {
  if (json) return printJson(result);
  process.stdout.write(
    `${result.agentId}: ${result.status} (${result.stopReason}) after ${result.turns} turns, ${result.toolUses} tool calls, ${result.durationMs} ms\n` +
      `usage: ${formatUsage(result.usage)}\n${result.error ? `error: ${result.error}\n` : ''}\n${result.text}\n`,
  );
}

function exitFor(result: ForkResult): void {
  if (result.status !== 'completed') process.exitCode = EXIT.forkNotCompleted;
}

interface ForkFlags {
  file?: string;
  prompt?: string;
  label?: string;
  maxTurns?: number;
  timeout?: string;
  readOnly?: boolean;
  agentId?: string;
  workspace?: string;
  wait?: boolean;
}

function forkParams(flags: ForkFlags): ForkParams {
  let params: Record<string, unknown> = {};
  if (flags.file) {
    try {
      params = JSON.parse(readFileSync(flags.file === '-' ? 0 : flags.file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new CliError(`Cannot read fork input from ${flags.file}: ${(err as Error).message}`, EXIT.usage);
    }
  }
  if (flags.prompt) params.prompt = flags.prompt;
  if (flags.label) params.forkLabel = flags.label;
  if (flags.maxTurns !== undefined) params.maxTurns = flags.maxTurns;
  if (flags.timeout) {
    if (!durationSchema.safeParse(flags.timeout).success) throw new CliError(`--timeout: expected a duration like 90s or 5m, got "${flags.timeout}"`, EXIT.usage);
    params.timeout = flags.timeout;
  }
  if (flags.readOnly) params.toolFilter = 'readOnly';
  if (flags.agentId) params.agentId = flags.agentId;
  if (flags.workspace) params.workspace = { ...(params.workspace as object), root: flags.workspace };
  if (!params.prompt) throw new CliError('A fork needs a directive: --prompt "..." or a JSON file with "prompt" (--file).', EXIT.usage);
  return params as ForkParams;
}

export function registerAgentCommands(program: Command, globals: () => GlobalOptions): void {
  const fork = program
    .command('fork [agentId]')
    .description('start a fork (from flags or a JSON input file), or a fork of an agent as it stands or from a past turn (--at-turn); --wait to wait for its result')
    .option('-f, --file <path>', 'JSON input for forkWorkflow (see `forkflow schema`); - reads stdin')
    .option('-p, --prompt <text>', 'the directive')
    .option('-l, --label <label>', 'fork label')
    .option('--max-turns <n>', 'maximum model calls', positiveInt('--max-turns'))
    .option('--timeout <duration>', 'wall-clock limit, e.g. 5m')
    .option('--read-only', 'only Read, Glob and Grep')
    .option('--agent-id <id>', 'agent (and workflow) id')
    .option('--workspace <dir>', 'workspace root on the tool worker')
    .option('-w, --wait', 'wait for the result');
  addPointOptions(fork).action((agentId: string | undefined, flags: ForkFlags & PointFlags) =>
      withClient(globals(), async (client) => {
        // A replay sends no directive: its prompt only names it.
        const named = flags.replay && agentId && !flags.prompt && !flags.file ? { prompt: `replay of ${agentId}${flags.atTurn !== undefined ? ` from turn ${flags.atTurn}` : ''}` } : {};
        const { params, point } = pointParams(agentId, flags, forkParams({ ...flags, ...named }));
        const handle = agentId ? await client.forkFrom(agentId, params as ForkParams, point) : await client.start(params as ForkParams);
        if (!flags.wait) {
          if (globals().json) printJson({ agentId: handle.agentId, runId: handle.runId });
          else process.stdout.write(`started ${handle.agentId}\n`);
          return;
        }
        const result = await handle.result();
        printResult(result, globals().json);
        exitFor(result);
      }),
    );

  program
    .command('status <agentId>')
    .description("an agent's live status (query `status`)")
    .action((agentId: string) =>
      withClient(globals(), async (client) => {
        const s = await client.status(agentId);
        if (globals().json) return printJson(s);
        process.stdout.write(
          table(
            ['field', 'value'],
            [
              ['agent', s.agentId],
              ['state', s.state],
              ['label', s.forkLabel],
              ['turns', `${s.turns}/${s.maxTurns}${s.maxTurnsReached ? ' (max reached)' : ''}`],
              ['tool calls', s.toolUses],
              ['usage', formatUsage(s.usage)],
              ['cache hit ratio', s.cacheHitRatio.toFixed(3)],
              ['context', s.context ? contextLine(s.context) : undefined],
              ['pending messages', s.pendingMessages],
              ['now', s.activity],
              ['parent', s.parentAgentId],
              ...lineageRows(s),
              ['error', s.error],
              ['rejected signals', s.rejectedSignals.length ? s.rejectedSignals.map((r) => r.issues.join('; ')).join(' | ') : undefined],
              ['last text', truncate(s.lastText, 100)],
            ],
          ) + '\n',
        );
      }),
    );

  program
    .command('send <agentId> <message>')
    .description('send a message; it enters the conversation at the next turn boundary')
    .option('-s, --summary <text>', 'a few words for UIs')
    .option('--from <who>', 'sender', 'operator')
    .action((agentId: string, message: string, flags: { summary?: string; from?: string }) =>
      withClient(globals(), async (client) => {
        await client.sendMessage(agentId, { message, summary: flags.summary, from: flags.from });
        if (globals().json) printJson({ agentId, queued: true });
        else process.stdout.write(`queued for ${agentId}\n`);
      }),
    );

  program
    .command('cancel <agentId>')
    .description('cancel an agent (and its subtree); it ends killed with its partial result')
    .action((agentId: string) =>
      withClient(globals(), async (client) => {
        await client.cancel(agentId);
        if (globals().json) printJson({ agentId, cancelRequested: true });
        else process.stdout.write(`cancellation requested for ${agentId}\n`);
      }),
    );

  program
    .command('list')
    .description('agents matching a visibility query, e.g. "ForkState = \'running\'"')
    .option('-q, --query <query>', 'visibility query (the Web UI search box language)')
    .option('-n, --limit <n>', 'at most this many', positiveInt('--limit'), 50)
    .option('--hidden', 'include forks run with skipTranscript (left out by default)')
    .action((flags: { query?: string; limit: number; hidden?: boolean }) =>
      withClient(globals(), async (client) => {
        const rows = await client.list({ query: flags.query, limit: flags.limit, includeHidden: flags.hidden === true });
        if (globals().json) return printJson(rows);
        process.stdout.write(
          table(
            ['agent', 'label', 'state', 'temporal', 'parent', 'started'],
            rows.map((r) => [r.agentId, r.label, r.state, r.temporalStatus, r.parentId, r.startTime]),
          ) + '\n',
        );
      }),
    );

  program
    .command('transcript <agentId>')
    .description("an agent's conversation, read a page at a time (query `transcriptPage`)")
    .action((agentId: string) =>
      withClient(globals(), async (client) => {
        // Printed as the pages arrive: a long conversation is never held whole. The JSON is
        // the same bytes as printJson of the whole array.
        const json = globals().json;
        let first = true;
        for await (const page of client.transcriptPages(agentId)) {
          for (const m of page) {
            if (json) process.stdout.write(`${first ? '[\n' : ',\n'}  ${JSON.stringify(m, null, 2).replace(/\n/g, '\n  ')}`);
            else process.stdout.write(`--- ${m.role}\n${textOf(m) || JSON.stringify(m.content).slice(0, 400)}\n`);
            first = false;
          }
        }
        if (json) process.stdout.write(first ? '[]\n' : '\n]\n');
      }),
    );

  program
    .command('result <agentId>')
    .description("wait for and print an agent's result")
    .action((agentId: string) =>
      withClient(globals(), async (client) => {
        const result = await client.result(agentId);
        printResult(result, globals().json);
        exitFor(result);
      }),
    );

  program
    .command('schema')
    .description('the JSON Schema of forkWorkflow input (for other SDKs and `temporal workflow start`)')
    .option('--contract', "instead: the service-tool contract (forkflow.callTool and forkflow.hook activities' input and result), for services in other languages")
    .action((flags: { contract?: boolean }) => printJson(flags.contract ? serviceContractJsonSchemas() : forkInputJsonSchema()));
}

