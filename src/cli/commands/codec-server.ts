/**
 * `forkflow codec-server`: serves forkflow's payload codecs over HTTP in Temporal's
 * codec-server protocol, for the Web UI (Settings → Codec Server, or the server's
 * `--ui-codec-endpoint`), `temporal workflow show --codec-endpoint`, and clients in other
 * languages. Same keys as the workers (FORKFLOW_ENCRYPTION_KEYS / _KEY_FILE). It always
 * requires a token (FORKFLOW_CODEC_SERVER_TOKEN, or one it makes and prints).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_CODEC_PORT, startCodecServer } from '../../payloads/codec-server';
import { encrypts, forkflowDataConverter } from '../../payloads/data-converter';
import { exposureWarning, newToken, TOKEN_PATTERN } from '../../payloads/endpoint-guard';
import { CliError, EXIT } from '../exit';
import { portOption, untilSignal } from './serve';
import { envSetting } from '../../shared/wire/env-settings';

function originOption(value: string, previous: string[] | undefined): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`expected an origin like http://localhost:8233, got "${value}"`);
  }
  return [...(previous ?? []), url.origin];
}

export function registerCodecServerCommand(program: Command): void {
  program
    .command('codec-server')
    .description("serve the payload codecs (encryption) at /encode and /decode for the Web UI, `temporal --codec-endpoint` and other SDKs' tools; a token is required")
    .option('--ip <ip>', 'address to listen on (beyond loopback: a loud warning)', '127.0.0.1')
    .option('--port <port>', `port (0: a free one)`, portOption, DEFAULT_CODEC_PORT)
    .option('--allow-origin <origin>', 'a Web UI origin allowed by CORS (repeatable; default http://localhost:8233 and http://127.0.0.1:8233)', originOption)
    .option('--allow-host <name>', 'another name it answers to in the Host header, e.g. a DNS name in front of it (repeatable; its own addresses always)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .action(async (flags: { ip: string; port: number; allowOrigin?: string[]; allowHost?: string[] }) => {
      const dataConverter = forkflowDataConverter();
      if (!encrypts(dataConverter) && !dataConverter.externalStorage) {
        throw new CliError('Nothing to decode: set FORKFLOW_ENCRYPTION_KEYS or FORKFLOW_ENCRYPTION_KEY_FILE to the keys your workers use (or turn external storage on).', EXIT.usage);
      }
      const given = envSetting(process.env, 'FORKFLOW_CODEC_SERVER_TOKEN') || undefined;
      if (given !== undefined && !TOKEN_PATTERN.test(given)) throw new CliError('FORKFLOW_CODEC_SERVER_TOKEN must be at least 16 characters of A-Z a-z 0-9 . _ ~ - (e.g. `openssl rand -hex 32`).', EXIT.usage);
      const token = given ?? newToken();
      const allowedOrigins = flags.allowOrigin ?? ['http://localhost:8233', 'http://127.0.0.1:8233'];
      const warning = exposureWarning('codec server', flags.ip);
      if (warning) process.stderr.write(`${warning}\n`);
      let server;
      try {
        server = await startCodecServer({ dataConverter, ip: flags.ip, port: flags.port, allowedOrigins, token, ...(flags.allowHost ? { allowHosts: flags.allowHost } : {}) });
      } catch (err) {
        throw new CliError(`Cannot listen on ${flags.ip}:${flags.port} (${(err as Error).message}): choose another --port.`, EXIT.failure);
      }
      process.stdout.write(
        `codec server: ${server.url} (POST /encode, /decode), token required${given ? ' (FORKFLOW_CODEC_SERVER_TOKEN)' : ': one made for this run (set FORKFLOW_CODEC_SERVER_TOKEN to keep one)'}\n` +
          `CORS origins: ${allowedOrigins.join(', ')}\n` +
          `Web UI: Settings → Codec Server → ${server.endpoint}\n` +
          `CLI: temporal workflow show --codec-endpoint ${server.url} --codec-auth "Bearer ${token}" -w <id>\n`,
      );
      await untilSignal();
      await server.close();
    });
}
