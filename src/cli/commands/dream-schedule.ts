/**
 * `forkflow dream schedule create|describe|pause|unpause|trigger|delete`: the scope's
 * Temporal Schedule (interval or cron, overlap SKIP, catch-up window, jitter).
 */
import type { Command } from 'commander';
import { DreamClient, type DreamScheduleView } from '../../client';
import { printJson, table } from '../output';
import type { GlobalOptions } from './agents';
import { collect, specFromFlags, type SpecFlags } from './schedule-spec';
import { addDreamConfigOptions, dreamConfigFrom, withDreamClient, type DreamConfigFlags } from './dream-flags';

function seconds(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : `${Math.round(ms / 1000)}s`;
}

function printView(v: DreamScheduleView, json?: boolean): void {
  if (json) return printJson(v);
  const spec = [...v.intervals.map((i) => `every ${seconds(i.everyMs)}${i.offsetMs ? ` + ${seconds(i.offsetMs)}` : ''}`), ...(v.calendars.length ? [`${v.calendars.length} calendar/cron spec(s)`] : [])];
  process.stdout.write(
    table(
      ['field', 'value'],
      [
        ['schedule', v.scheduleId],
        ['scope', v.scope],
        ['state', v.paused ? 'paused' : 'active'],
        ['note', v.note],
        ['spec', spec.join(', ')],
        ['jitter', seconds(v.jitterMs)],
        ['overlap', v.overlap],
        ['catch-up window', seconds(v.catchupWindowMs)],
        ['next runs', v.nextRunTimes.slice(0, 3).join(', ')],
        ['running', v.running.map((r) => r.workflowId).join(', ') || 'none'],
        ['actions taken', v.actionsTaken],
        ['skipped (overlap)', v.skippedOverlap],
        ['recent', v.recent.slice(-3).map((r) => `${r.workflowId} @ ${r.takenAt}`).join(', ')],
      ],
    ) + '\n',
  );
}


export function registerDreamScheduleCommands(dream: Command, globals: () => GlobalOptions): void {
  const schedule = dream.command('schedule').description("a scope's consolidation Schedule (overlap SKIP)");
  const scopeOnly = (name: string, description: string) => schedule.command(name).description(description).requiredOption('--scope <scope>', 'memory scope');

  addDreamConfigOptions(schedule.command('create').description('create the Schedule of a scope (interval or cron)'))
    .option('--interval <duration>', 'run every this long, e.g. 6h')
    .option('--offset <duration>', 'shift the interval from the epoch')
    .option('--cron <expr>', 'cron expression, UTC (repeatable)', collect)
    .option('--jitter <duration>', 'random delay up to this per run')
    .option('--catchup-window <duration>', 'take runs missed by at most this after an outage (default 10m)')
    .option('--paused', 'create it paused')
    .option('--note <text>', 'a note shown with its state')
    .action((flags: DreamConfigFlags & SpecFlags) => {
      const config = dreamConfigFrom(flags);
      return withDreamClient(globals(), async (client) => {
        const spec = specFromFlags(flags);
        printView(await new DreamClient(client).schedules.create(config, spec), globals().json);
      });
    });

  scopeOnly('describe', 'the Schedule: spec, state, running and recent runs').action((flags: { scope: string }) =>
    withDreamClient(globals(), async (client) => printView(await new DreamClient(client).schedules.describe(flags.scope), globals().json)),
  );

  const done = (what: string, scope: string) => {
    if (globals().json) printJson({ scope, [what]: true });
    else process.stdout.write(`${what} schedule of ${scope}\n`);
  };
  scopeOnly('pause', 'stop automatic runs (manual runs still work)')
    .option('--note <text>', 'why')
    .action((flags: { scope: string; note?: string }) =>
      withDreamClient(globals(), async (client) => {
        await new DreamClient(client).schedules.pause(flags.scope, flags.note);
        done('paused', flags.scope);
      }),
    );
  scopeOnly('unpause', 'resume automatic runs')
    .option('--note <text>', 'why')
    .action((flags: { scope: string; note?: string }) =>
      withDreamClient(globals(), async (client) => {
        await new DreamClient(client).schedules.unpause(flags.scope, flags.note);
        done('unpaused', flags.scope);
      }),
    );
  scopeOnly('trigger', 'run it now, unless a run is still going (overlap SKIP)').action((flags: { scope: string }) =>
    withDreamClient(globals(), async (client) => {
      await new DreamClient(client).schedules.trigger(flags.scope);
      done('triggered', flags.scope);
    }),
  );
  scopeOnly('delete', 'delete the Schedule (running runs finish)').action((flags: { scope: string }) =>
    withDreamClient(globals(), async (client) => {
      await new DreamClient(client).schedules.delete(flags.scope);
      done('deleted', flags.scope);
    }),
  );
}
