/**
 * Time-travel commands: `retry` (an agent that ended badly, from its last complete turn),
 * `lineage` (where an agent came from), and `eval` (cases forked from points of recorded
 * agents: src/testing/eval). `fork <id> --at-turn k`'s flags are in ./point-flags.ts.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ForkflowClient, RetryOptions } from '../../client';
import { durationSchema } from '../../shared/base/duration';
import { evalSpecSchema, evalTable, runEval, type EvalReport } from '../../testing/eval';
import { CliError, EXIT } from '../exit';
import { printJson, table } from '../output';
import { withClient, type GlobalOptions } from './agents';
import { turnNumber } from './point-flags';

const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new CliError(`${name} must be a positive integer, got "${v}"`, EXIT.usage);
  return n;
};

interface RetryFlags {
  fromTurn?: number;
  budget?: number;
  maxTurns?: number;
  timeout?: string;
  wait?: boolean;
}

async function printLineage(client: ForkflowClient, agentId: string, json: boolean | undefined): Promise<void> {
  const steps = await client.lineage(agentId);
  if (json) return printJson(steps);
  process.stdout.write(
    `${table(
      ['agent', 'label', 'state', 'came from'],
      steps.map((s) => [s.agentId, s.label, s.state, s.parentId ? (s.parentTurn !== undefined ? `${s.parentId} at turn ${s.parentTurn}` : `${s.parentId} (sub-agent)`) : 'the original']),
    )}\n`,
  );
}

function printEval(report: EvalReport, json: boolean | undefined): void {
  if (json) return printJson(report);
  process.stdout.write(`${evalTable(report)}\n`);
}

export function registerTimeTravelCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command('retry <agentId>')
    .description('continue an agent that ended failed, killed, timed out, out of budget or at its turn limit, from its last complete turn')
    .option('--from-turn <k>', 'go on from the end of this turn instead', turnNumber('--from-turn'))
    .option('--budget <tokens>', 'a new token budget, counted from the retry point', positive('--budget'))
    .option('--max-turns <n>', 'a new turn limit (all its turns)', positive('--max-turns'))
    .option('--timeout <duration>', 'a wall-clock limit for the retried run, e.g. 5m')
    .option('-w, --wait', 'wait for the result')
    .action((agentId: string, flags: RetryFlags) =>
      withClient(globals(), async (client) => {
        if (flags.timeout !== undefined && !durationSchema.safeParse(flags.timeout).success) throw new CliError(`--timeout: expected a duration like 90s or 5m, got "${flags.timeout}"`, EXIT.usage);
        const opts: RetryOptions = {
          ...(flags.fromTurn !== undefined ? { fromTurn: flags.fromTurn } : {}),
          ...(flags.budget !== undefined ? { budget: { maxTokens: flags.budget } } : {}),
          ...(flags.maxTurns !== undefined ? { maxTurns: flags.maxTurns } : {}),
          ...(flags.timeout !== undefined ? { timeout: flags.timeout } : {}),
        };
        const handle = await client.retry(agentId, opts);
        const status = await handle.status().catch(() => undefined);
        const from = status?.retry?.fromTurn;
        if (!flags.wait) {
          if (globals().json) return printJson({ agentId, runId: handle.runId, fromTurn: from });
          return void process.stdout.write(`retrying ${agentId} from turn ${from ?? '?'} (run ${handle.runId})\n`);
        }
        const result = await handle.result();
        if (globals().json) printJson(result);
        else process.stdout.write(`${result.agentId}: ${result.status} (${result.stopReason}) after ${result.turns} turns\n${result.text}\n`);
        if (result.status !== 'completed') process.exitCode = EXIT.forkNotCompleted;
      }),
    );

  program
    .command('lineage <agentId>')
    .description('where an agent came from: each agent it was forked from (and at which turn), back to the original')
    .action((agentId: string) => withClient(globals(), (client) => printLineage(client, agentId, globals().json)));

  program
    .command('eval <specFile>')
    .description('run eval cases as sync forks from points of recorded agents (a JSON spec; see the README), within a concurrency limit and a token budget')
    .option('--concurrency <n>', 'cases running at once (overrides the spec)', positive('--concurrency'))
    .option('--budget <tokens>', 'tokens the whole run may charge (overrides the spec)', positive('--budget'))
    .action((specFile: string, flags: { concurrency?: number; budget?: number }) =>
      withClient(globals(), async (client) => {
        let raw: unknown;
        try {
          raw = JSON.parse(readFileSync(specFile === '-' ? 0 : specFile, 'utf8'));
        } catch (err) {
          throw new CliError(`Cannot read an eval spec from ${specFile}: ${(err as Error).message}`, EXIT.usage);
        }
        const parsed = evalSpecSchema.safeParse(raw);
        if (!parsed.success) throw new CliError(`Invalid eval spec ${specFile}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(spec)'}: ${i.message}`).join('; ')}`, EXIT.usage);
        const spec = { ...parsed.data, ...(flags.concurrency ? { concurrency: flags.concurrency } : {}), ...(flags.budget ? { budget: { maxTokens: flags.budget } } : {}) };
        const report = await runEval(client, spec);
        printEval(report, globals().json);
        if (report.totals.errors > 0 || report.totals.failed > 0) process.exitCode = EXIT.forkNotCompleted;
      }),
    );
}
