/**
 * `forkflow gateway`: the model gateway (src/gateway) as a long-running process, next to the
 * provider-facing side of the workers. Workers use it when FORKFLOW_MODEL_GATEWAY names it.
 */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { ModelGateway } from '../../gateway/gateway';
import { CliError, EXIT } from '../exit';
import { portOption, untilSignal } from './serve';

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
    .option('--dir <dir>', 'where finished calls wait for their retry (default: FORKFLOW_GATEWAY_DIR, else $TMPDIR/forkflow-gateway)')
    .action(async (flags: { host: string; port: number; upstream?: string; dir?: string }) => {
      const upstream = flags.upstream ?? process.env.ANTHROPIC_BASE_URL ?? DEFAULT_UPSTREAM;
      const dir = resolve(flags.dir ?? process.env.FORKFLOW_GATEWAY_DIR ?? join(tmpdir(), 'forkflow-gateway'));
      let gateway: ModelGateway;
      try {
        gateway = await ModelGateway.start({ upstream, dir, host: flags.host, port: flags.port });
      } catch (err) {
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
