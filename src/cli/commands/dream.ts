/**
 * `forkflow dream run|status` and the `dream schedule` and `away` commands (registered from
 * here, so the CLI's entry point needs one line). A run's outcome prints as one line plus
 * details; `--json` prints it whole. Exit codes: 0 for completed, skipped and lock_blocked;
 * 4 when a consolidation was attempted and failed (timed_out, errored, escape_audit_failed).
 */
import type { Command } from 'commander';
import { DreamClient, type DreamOutcome } from '../../client';
import { dreamConfigJsonSchema } from '../../shared/dream/config';
import { CliError, EXIT } from '../exit';
import { printJson, table } from '../output';
import type { GlobalOptions } from './agents';
import { registerAwayCommand } from './away';
import { addDreamConfigOptions, dreamConfigFrom, withDreamClient, type DreamConfigFlags } from './dream-flags';
import { registerDreamScheduleCommands } from './dream-schedule';

/** One line saying what happened, then the details that matter for that outcome. */
export function describeOutcome(o: DreamOutcome): string {
  const head = `${o.scope}: ${o.kind}`;
  switch (o.kind) {
    case 'skipped':
      return `${head} (gate: ${o.gate})\n${o.reason}\n`;
    case 'lock_blocked':
      return `${head}\n${o.reason}\n`;
    case 'completed': {
      const c = o.changes;
      const files = [...c.created.map((f) => `+ ${f}`), ...c.updated.map((f) => `~ ${f}`), ...c.removed.map((f) => `- ${f}`)];
      const takeover = o.takeover ? `took over a stale lock (run ${o.takeover.runId})\n` : '';
      return `${head}: ${o.memoriesChanged} memories changed from ${o.sessionsReviewed} session(s); index ${o.indexLines ?? 'missing'} lines\n${takeover}${files.join('\n')}${files.length ? '\n' : ''}\n${o.fork.text}\n`;
    }
    case 'timed_out':
    case 'errored':
    case 'escape_audit_failed': {
      const rollback = o.rolledBack ? `last consolidated rolled back to ${o.lastConsolidatedAt ?? 'never'}\n` : '';
      const escapes = o.kind === 'escape_audit_failed' ? o.escapes.map((e) => `escaped: ${e.path} (${e.reason}: ${e.detail})\n`).join('') : '';
      return `${head}\n${o.error}\n${escapes}${rollback}`;
    }
  }
}

function exitCodeFor(o: DreamOutcome): number {
  return o.kind === 'timed_out' || o.kind === 'errored' || o.kind === 'escape_audit_failed' ? EXIT.forkNotCompleted : EXIT.ok;
}

export function registerDreamCommands(program: Command, globals: () => GlobalOptions): void {
  const dream = program.command('dream').description('memory consolidation (autoDream) of a memory scope');

  addDreamConfigOptions(dream.command('run').description('run one consolidation attempt now (its gates apply unless --manual)'))
    .option('--now <time>', 'evaluate the gates as if at this ISO time (tests, what-if)')
    .option('--id <workflowId>', 'workflow id of the run (default dream-manual-<scope>-<random>)')
    .option('--no-wait', 'print the run ids and return')
    .action((flags: DreamConfigFlags & { now?: string; id?: string; wait: boolean }) => {
      const config = { ...dreamConfigFrom(flags), ...(flags.now ? { now: flags.now } : {}) };
      return withDreamClient(globals(), async (client) => {
        const handle = await new DreamClient(client).start(config, flags.id ? { workflowId: flags.id } : {});
        if (!flags.wait) {
          if (globals().json) printJson({ workflowId: handle.workflowId, runId: handle.runId });
          else process.stdout.write(`started ${handle.workflowId}\n`);
          return;
        }
        const outcome = await handle.result();
        if (globals().json) printJson(outcome);
        else process.stdout.write(describeOutcome(outcome));
        process.exitCode = exitCodeFor(outcome);
      });
    });

  dream
    .command('status')
    .description("a scope's lock holder and its recent runs with their outcomes")
    .requiredOption('--scope <scope>', 'memory scope')
    .option('-n, --limit <n>', 'at most this many runs', '20')
    .action((flags: { scope: string; limit: string }) =>
      withDreamClient(globals(), async (client) => {
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new CliError(`--limit must be a positive integer, got "${flags.limit}"`, EXIT.usage);
        const status = await new DreamClient(client).status(flags.scope, { limit });
        if (globals().json) return printJson(status);
        const lock = status.lock.held ? `held by ${status.lock.workflowId} (run ${status.lock.runId}, since ${status.lock.startedAt})` : 'free';
        process.stdout.write(`scope ${status.scope} · lock ${lock}\n`);
        process.stdout.write(
          table(
            ['run', 'temporal', 'outcome', 'started', 'detail'],
            status.runs.map((r) => [r.workflowId, r.temporalStatus, r.outcome, r.startedAt, r.detail?.slice(0, 80)]),
          ) + '\n',
        );
      }),
    );

  dream
    .command('schema')
    .description('the JSON Schema of autoDreamWorkflow input (for other SDKs and `temporal workflow start`)')
    .action(() => printJson(dreamConfigJsonSchema()));

  registerDreamScheduleCommands(dream, globals);
  registerAwayCommand(program, globals);
}
