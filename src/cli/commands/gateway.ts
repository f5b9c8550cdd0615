/**
 * `forkflow gateway`: the model gateway (src/gateway) as a long-running process, next to the
 * provider-facing side of the workers. Workers use it when FORKFLOW_MODEL_GATEWAY names it.
 * Besides its default upstream it fronts named providers: every FORKFLOW_PROVIDERS (or
 * FORKFLOW_PROVIDERS_FILE) entry with a base URL, the workers' own configuration, and any
 * `--provider name=url`.
 */
import { join, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { defaultStateDir } from '../../activities/tools/sandbox';
import { ModelGateway } from '../../gateway/gateway';
import { isPrivateDirError } from '../../gateway/private-dir';
import { openWorkerStore } from '../../worker/private-stores';
import { InvalidProvidersError, providersFromEnv } from '../../worker/providers';
import { providerNameSchema } from '../../shared/providers/model-allowlist';
import { CliError, EXIT } from '../exit';
import { portOption, untilSignal } from './serve';
import { envSetting } from '../../shared/wire/env-settings';

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

function providerOption(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  const name = value.slice(0, Math.max(0, at));
  if (at < 0 || !providerNameSchema.safeParse(name).success) throw new InvalidArgumentError('a provider is <name>=<base URL>, e.g. openai=https://api.openai.com/v1');
  return { ...previous, [name]: upstreamOption(value.slice(at + 1)) };
}

/** The named providers: FORKFLOW_PROVIDERS entries with a base URL, then `--provider` (which wins). */
function namedProviders(flags: Record<string, string>): Record<string, string> {
  let fromEnv: Record<string, string>;
  try {
    fromEnv = Object.fromEntries(providersFromEnv().flatMap((p) => (p.baseURL ? [[p.name, p.baseURL]] : [])));
  } catch (err) {
    if (err instanceof InvalidProvidersError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
  return { ...fromEnv, ...flags };
}

export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('run the model gateway: model calls whose worker dies are finished and replayed to the retry, not paid for twice')
    .option('--host <ip>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', portOption, 8787)
    .option('--upstream <url>', `the provider (default: ANTHROPIC_BASE_URL, else ${DEFAULT_UPSTREAM})`, upstreamOption)
    .option('--dir <dir>', "where finished calls wait for their retry, a directory of this user's alone (default: FORKFLOW_GATEWAY_DIR, else <state dir>/gateway)")
    .option('--provider <name=url>', 'also front this named provider at /forkflow/v1/providers/<name>/ (repeatable; FORKFLOW_PROVIDERS entries with a baseURL are fronted too)', providerOption)
    .action(async (flags: { host: string; port: number; upstream?: string; dir?: string; provider?: Record<string, string> }) => {
      const upstream = flags.upstream ?? process.env.ANTHROPIC_BASE_URL ?? DEFAULT_UPSTREAM;
      const providers = namedProviders(flags.provider ?? {});
      const dir = resolve(flags.dir ?? envSetting(process.env, 'FORKFLOW_GATEWAY_DIR') ?? join(defaultStateDir(), 'gateway'));
      let gateway: ModelGateway;
      try {
        // Private, authenticated, and encrypted with the payload keys when they are set.
        const store = openWorkerStore(dir, flags.dir ? '--dir' : 'FORKFLOW_GATEWAY_DIR');
        gateway = await ModelGateway.start({ upstream, providers, dir: store, host: flags.host, port: flags.port });
      } catch (err) {
        if (isPrivateDirError(err)) throw new CliError(err.message, EXIT.usage);
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new CliError(`port ${flags.port} on ${flags.host} is taken: pick another with --port`, EXIT.usage);
        throw err;
      }
      const named = Object.entries(providers).map(([name, url]) => `, ${name} → ${url}`).join('');
      process.stdout.write(`model gateway listening ${gateway.url} → ${upstream}${named} (kept calls in ${dir})\n`);
      await untilSignal();
      await gateway.close();
      process.stdout.write(`model gateway stopped: ${JSON.stringify(gateway.counts)}\n`);
    });
}
