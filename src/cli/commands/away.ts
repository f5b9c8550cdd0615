/**
 * `forkflow away --scope X --since <time>`: the digest a returning user sees. `--since` takes
 * an ISO time or a duration back from now (`8h`). Nothing to summarise is a normal answer
 * (exit 0) and costs no model call.
 */
import type { Command } from 'commander';
import { awaySummary } from '../../client';
import { durationSchema, toMs } from '../../shared/base/duration';
import { CliError, EXIT } from '../exit';
import { printJson } from '../output';
import type { GlobalOptions } from './agents';
import { withDreamClient } from './dream-flags';

/** An ISO time, or a duration meaning that long before `now`. */
export function sinceTime(value: string, now: number): string {
  if (durationSchema.safeParse(value).success) return new Date(now - toMs(value)).toISOString();
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw new CliError(`--since: expected an ISO time or a duration like 8h, got "${value}"`, EXIT.usage);
  return new Date(at).toISOString();
}

function optionalNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new CliError(`${flag} must be a number, got "${value}"`, EXIT.usage);
  return n;
}

interface AwayFlags {
  scope: string;
  since: string;
  now?: string;
  thresholdHours?: string;
  maxEvents?: string;
  model?: string;
  timeout?: string;
  extraInstructions?: string;
}

export function registerAwayCommand(program: Command, globals: () => GlobalOptions): void {
  program
    .command('away')
    .description("what happened in a memory scope while the user was away (a read-only fork's digest)")
    .requiredOption('--scope <scope>', 'memory scope')
    .requiredOption('--since <time>', 'when the user was last seen: ISO time, or a duration ago such as 8h')
    .option('--now <time>', 'the time of return (default now)')
    .option('--threshold-hours <n>', 'away less than this: nothing to summarise (default 4, at most 720)')
    .option('--max-events <n>', 'the digest covers at most this many runs (default 50)')
    .option('--model <model>', 'model of the digest fork')
    .option('--timeout <duration>', 'limit of the digest fork (default 5m)')
    .option('--extra-instructions <text>', 'appended to the digest prompt')
    .action((flags: AwayFlags) =>
      withDreamClient(globals(), async (client) => {
        const now = flags.now ? sinceTime(flags.now, Date.now()) : new Date().toISOString();
        const thresholdHours = optionalNumber('--threshold-hours', flags.thresholdHours);
        const maxEvents = optionalNumber('--max-events', flags.maxEvents);
        const summary = await awaySummary(client, {
          memoryScope: flags.scope,
          since: sinceTime(flags.since, Date.parse(now)),
          now,
          ...(thresholdHours !== undefined ? { thresholdHours } : {}),
          ...(maxEvents !== undefined ? { maxEvents } : {}),
          ...(flags.model ? { model: flags.model } : {}),
          ...(flags.timeout ? { timeout: flags.timeout } : {}),
          ...(flags.extraInstructions ? { extraInstructions: flags.extraInstructions } : {}),
        });
        if (globals().json) return printJson(summary);
        if (summary.kind === 'nothing_to_summarise') {
          process.stdout.write(`${summary.message}\n`);
        } else if (summary.kind === 'summary') {
          process.stdout.write(`${summary.digest}\n\n(${summary.events.length} of ${summary.totalEvents} runs since ${summary.since})\n`);
        } else {
          process.stdout.write(`The digest could not be written: ${summary.error}\n`);
          process.exitCode = EXIT.forkNotCompleted;
        }
      }),
    );
}
