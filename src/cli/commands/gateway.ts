/**
 * `forkflow gateway`: the model gateway (src/gateway) as a long-running process, next to the
 * provider-facing side of the workers. Workers use it when FORKFLOW_MODEL_GATEWAY names it.
 */
import { join, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { defaultStateDir } from '../../activities/tools/sandbox';
import { ModelGateway } from '../../gateway/gateway';
import { isPrivateDirError } from '../../gateway/private-dir';
import { openWorkerStore } from '../../worker/private-stores';
import { CliError, EXIT } from '../exit';
import { portOption, untilSignal } from './serve';
import { envSetting } from '../../shared/env-settings';

const DEFAULT_UPSTREAM = 'https://api.anthropic.com';

function upstreamOption(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // Reported below.
  }
  throw new InvalidArgumentError('the upstream is an http(s) URL, e.g. https://api.anthropic.com');
}

export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('run the model gateway: model calls whose worker dies are finished and replayed to the retry, not paid for twice')
    .option('--host <ip>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', portOption, 8787)
    .option('--upstream <url>', `the provider (default: ANTHROPIC_BASE_URL, else ${DEFAULT_UPSTREAM})`, upstreamOption)
    .option('--dir <dir>', "where finished calls wait for their retry, a directory of this user's alone (default: FORKFLOW_GATEWAY_DIR, else <state dir>/gateway)")
    .action(async (flags: { host: string; port: number; upstream?: string; dir?: string }) => {
      const upstream = flags.upstream ?? process.env.ANTHROPIC_BASE_URL ?? DEFAULT_UPSTREAM;
      const dir = resolve(flags.dir ?? envSetting(process.env, 'FORKFLOW_GATEWAY_DIR') ?? join(defaultStateDir(), 'gateway'));
      let gateway: ModelGateway;
      try {
        // Private, authenticated, and encrypted with the payload keys when they are set.
        const store = openWorkerStore(dir, flags.dir ? '--dir' : 'FORKFLOW_GATEWAY_DIR');
        gateway = await ModelGateway.start({ upstream, dir: store, host: flags.host, port: flags.port });
      } catch (err) {
        if (isPrivateDirError(err)) throw new CliError(err.message, EXIT.usage);
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new CliError(`port ${flags.port} on ${flags.host} is taken: pick another with --port`, EXIT.usage);
        throw err;
      }
      process.stdout.write(`model gateway listening ${gateway.url} → ${upstream} (kept calls in ${dir})\n`);
      await untilSignal();
      await gateway.close();
      process.stdout.write(`model gateway stopped: ${JSON.stringify(gateway.counts)}\n`);
    });
}
