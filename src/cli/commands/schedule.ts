/**
 * `forkflow schedule create|list|describe|trigger|delete`: prompt Schedules, which send a
 * message to an existing agent on a cron or an interval (src/client/prompt-schedule.ts).
 */
import type { Command } from 'commander';
import type { PromptScheduleView } from '../../client';
import { printJson, table } from '../output';
import { withClient, type GlobalOptions } from './agents';
import { collect, specFromFlags, type SpecFlags } from './schedule-spec';

interface CreateFlags extends SpecFlags {
  name?: string;
  summary?: string;
  from?: string;
}

const seconds = (ms: number) => `${Math.round(ms / 1000)}s`;

function specOf(v: PromptScheduleView): string {
  return [...v.intervals.map((i) => `every ${seconds(i.everyMs)}${i.offsetMs ? ` + ${seconds(i.offsetMs)}` : ''}`), ...v.cron.map((c) => `cron ${c}`)].join(', ') || 'calendar spec';
}

function printViews(views: PromptScheduleView[], json?: boolean): void {
  if (json) return printJson(views);
  const rows = views.map((v) => [v.name, v.agentId, specOf(v), v.paused ? 'paused' : 'active', v.nextRunTimes[0], v.actionsTaken]);
  process.stdout.write(table(['name', 'agent', 'when', 'state', 'next', 'sent'], rows) + '\n');
}

export function registerScheduleCommands(program: Command, globals: () => GlobalOptions): void {
  const schedule = program.command('schedule').description('prompt Schedules: a message sent to an agent on a cron or an interval');

  schedule
    .command('create <agent> <message>')
    .description('send <message> to <agent> (id or name) each time the schedule fires; a closed agent gets nothing (that run fails AgentNotRunning)')
    .option('--name <name>', 'the schedule\'s name (default: the agent id)')
    .option('--cron <expr>', 'cron expression, UTC unless prefixed CRON_TZ= (repeatable)', collect)
    .option('--interval <duration>', 'fire every this long, e.g. 1h')
    .option('--offset <duration>', 'shift the interval from the epoch')
    .option('--jitter <duration>', 'random delay up to this per firing')
    .option('--catchup-window <duration>', 'after an outage, send at most one prompt missed by no more than this (default 10m)')
    .option('--paused', 'create it paused')
    .option('--note <text>', 'a note shown with its state')
    .option('-s, --summary <text>', 'a few words for UIs, sent with the message')
    .option('--from <who>', 'sender (default: schedule:<name>)')
    .action((agent: string, message: string, flags: CreateFlags) =>
      withClient(globals(), async (client) => {
        const spec = specFromFlags(flags);
        const msg = { message, ...(flags.summary ? { summary: flags.summary } : {}), ...(flags.from ? { from: flags.from } : {}) };
        printViews([await client.schedules.create(flags.name ?? agent, agent, msg, spec)], globals().json);
      }),
    );

  schedule
    .command('list')
    .description('every prompt schedule (name, agent, when, state, next firing, prompts sent)')
    .option('--agent <agentId>', 'only those of this agent')
    .action((flags: { agent?: string }) => withClient(globals(), async (client) => printViews(await client.schedules.list(flags.agent ? { agentId: flags.agent } : {}), globals().json)));

  schedule
    .command('describe <name>')
    .description('one schedule, with its recent runs (each run\'s result says whether its prompt was delivered)')
    .action((name: string) =>
      withClient(globals(), async (client) => {
        const v = await client.schedules.describe(name);
        if (globals().json) return printJson(v);
        printViews([v]);
        process.stdout.write(`message: ${v.message ?? '?'}\nrecent runs: ${v.recent.map((r) => r.workflowId).join(', ') || 'none'}\n`);
      }),
    );

  const act = (what: string, fn: (name: string) => (client: Parameters<Parameters<typeof withClient>[1]>[0]) => Promise<void>) => (name: string) =>
    withClient(globals(), async (client) => {
      await fn(name)(client);
      if (globals().json) printJson({ name, [what]: true });
      else process.stdout.write(`${what} schedule ${name}\n`);
    });
  schedule.command('trigger <name>').description('send its prompt now (skipped while a previous run is still going)').action(act('triggered', (name) => (c) => c.schedules.trigger(name)));
  schedule.command('delete <name>').description('delete the schedule (prompts already sent stay sent)').action(act('deleted', (name) => (c) => c.schedules.delete(name)));
}
