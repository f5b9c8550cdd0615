/**
 * `forkflow patches open-runs`: the check an operator runs before a patch retirement step
 * (docs/guides/patches.md). It lists the open runs of forkflow's workflow types started before
 * a given time (and, with --without, that have not recorded a given patch), and exits 1 while
 * any remain, so a release script can wait on it (src/client/open-runs.ts says why start time).
 */
import type { Command } from 'commander';
import { listOpenRuns, openRunsQuerySchema } from '../../client/open-runs';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { EXIT, CliError } from '../exit';
import { printJson } from '../output';
import { withClient, type GlobalOptions } from './agents';

export function registerPatchesCommands(program: Command, globals: () => GlobalOptions): void {
  const patches = program.command('patches').description('checks for retiring workflow patches (docs/guides/patches.md)');
  patches
    .command('open-runs')
    .description('list open runs started before --started-before (the moment the last worker without the build you retire against stopped); exit 1 while any remain')
    .requiredOption('--started-before <time>', 'ISO 8601 time with offset, e.g. 2026-12-07T18:00:00Z')
    .option('--without <patchId>', 'only runs that have not recorded this patch (they could still take its old branch)')
    .option('--any-task-queue', "every task queue, not only the client's (--task-queue)")
    .action((flags: { startedBefore: string; without?: string; anyTaskQueue?: boolean }) =>
      withClient(globals(), async (client) => {
        const asked = openRunsQuerySchema.safeParse({
          startedBefore: flags.startedBefore,
          ...(flags.without !== undefined ? { withoutPatch: flags.without } : {}),
          ...(flags.anyTaskQueue ? {} : { taskQueue: client.taskQueue }),
        });
        if (!asked.success) throw new CliError(`patches open-runs: ${describeIssues(asked.error).join('; ')}`, EXIT.usage);
        const { query, runs } = await listOpenRuns(client.temporal, asked.data);
        if (globals().json) printJson({ query, open: runs.length, runs });
        else {
          for (const r of runs) process.stdout.write(`${r.workflowId}  ${r.type}  ${r.taskQueue}  started ${r.startTime}  patches: ${r.patches.join(',') || '-'}\n`);
          process.stdout.write(runs.length === 0 ? `no open run started before ${asked.data.startedBefore}${flags.without ? ` without ${flags.without}` : ''}: the next retirement step is safe\n` : `${runs.length} open run${runs.length === 1 ? '' : 's'} still need the older code\n`);
        }
        if (runs.length > 0) process.exitCode = EXIT.failure;
      }),
    );
}
