/**
 * `forkflow top`: live counts in the terminal — open agents by label and state from
 * visibility, plus forkflow's metrics read from workers' Prometheus endpoints — redrawn
 * until Ctrl-C. `--once` takes one reading (with `--json`, for scripts and tests).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { LiveView } from '../demo/live-table';
import { CliError, EXIT } from '../exit';
import { printJson } from '../output';
import { renderTop } from '../top/render';
import { takeTopSnapshot, type TopOptions, type TopSnapshot } from '../top/snapshot';
import { withClient, type GlobalOptions } from './agents';
import { untilSignal } from './serve';

interface TopFlags {
  metricsUrl: string[];
  query?: string;
  limit: number;
  interval: number;
  once?: boolean;
}

function collectUrl(value: string, previous: string[]): string[] {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new InvalidArgumentError(`"${value}" is not an http(s) URL; a worker's metrics are at http://<ip:port>/metrics.`);
  }
  return [...previous, value];
}

function positive(name: string) {
  return (value: string) => {
    const n = Number(value);
    if (!(n > 0)) throw new InvalidArgumentError(`${name} must be a positive number, got "${value}"`);
    return n;
  };
}

/** Everything but the time, so an unchanged screen is not printed again off a terminal. */
function changeKey(s: TopSnapshot): string {
  return JSON.stringify({ ...s, at: undefined });
}

function resolveAfter(ms: number): { promise: Promise<false>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return { promise, cancel: () => clearTimeout(timer) };
}

async function refreshUntilSignal(read: () => Promise<TopSnapshot>, intervalMs: number, json?: boolean): Promise<void> {
  const view = new LiveView();
  const stopped = untilSignal().then(() => true as const);
  for (;;) {
    const snapshot = await read();
    // One JSON object a line while refreshing, so a consumer can read the stream.
    if (json) process.stdout.write(`${JSON.stringify(snapshot)}\n`);
    else view.show(renderTop(snapshot), changeKey(snapshot));
    const wait = resolveAfter(intervalMs);
    const stop = await Promise.race([stopped, wait.promise]);
    wait.cancel();
    if (stop) break;
  }
  view.done();
}

export function registerTopCommand(program: Command, globals: () => GlobalOptions): void {
  program
    .command('top')
    .description('live counts: open agents by label and state, and forkflow metrics from workers (--metrics-url)')
    .option('--metrics-url <url>', "a worker's Prometheus endpoint, e.g. http://127.0.0.1:9464/metrics (repeat for several workers)", collectUrl, [])
    .option('-q, --query <query>', "narrow the agents with a visibility query, e.g. \"ForkLabel = 'callers'\"")
    .option('--limit <n>', 'group at most this many open agents', positive('--limit'), 1000)
    .option('--interval <seconds>', 'refresh period', positive('--interval'), 2)
    .option('--once', 'take one reading and exit (with --json: one JSON object)')
    .action((flags: TopFlags) =>
      withClient(globals(), async (client) => {
        const opts: TopOptions = { query: flags.query, limit: Math.floor(flags.limit), metricsUrls: flags.metricsUrl };
        const read = () => takeTopSnapshot(client, opts);
        if (!flags.once) return refreshUntilSignal(read, flags.interval * 1000, globals().json);
        const snapshot = await read();
        if (globals().json) printJson(snapshot);
        else process.stdout.write(`${renderTop(snapshot)}\n`);
        // A script asking for numbers must notice when some were missing.
        if ('error' in snapshot.agents) throw new CliError(`visibility query failed: ${snapshot.agents.error}`, EXIT.unavailable);
        if (snapshot.metrics?.errors.length) process.exitCode = EXIT.failure;
      }),
    );
}
