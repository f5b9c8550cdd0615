/**
 * `forkflow codec-server`: serves forkflow's payload codecs over HTTP in Temporal's
 * codec-server protocol, for the Web UI (Settings → Codec Server, or the server's
 * `--ui-codec-endpoint`), `temporal workflow show --codec-endpoint`, and clients in other
 * languages. Same keys as the workers (FORKFLOW_ENCRYPTION_KEYS / _KEY_FILE).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_CODEC_PORT, startCodecServer } from '../../payloads/codec-server';
import { encrypts, forkflowDataConverter } from '../../payloads/data-converter';
import { CliError, EXIT } from '../exit';
import { portOption, untilSignal } from './serve';

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
    .description("serve the payload codecs (encryption) at /encode and /decode for the Web UI, `temporal --codec-endpoint` and other SDKs' tools")
    .option('--ip <ip>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', `port (0: a free one)`, portOption, DEFAULT_CODEC_PORT)
    .option('--allow-origin <origin>', 'a Web UI origin allowed by CORS (repeatable; default http://localhost:8233 and http://127.0.0.1:8233)', originOption)
    .action(async (flags: { ip: string; port: number; allowOrigin?: string[] }) => {
      const dataConverter = forkflowDataConverter();
      if (!encrypts(dataConverter) && !dataConverter.externalStorage) {
        throw new CliError('Nothing to decode: set FORKFLOW_ENCRYPTION_KEYS or FORKFLOW_ENCRYPTION_KEY_FILE to the keys your workers use (or turn external storage on).', EXIT.usage);
      }
      const token = process.env.FORKFLOW_CODEC_SERVER_TOKEN || undefined;
      const allowedOrigins = flags.allowOrigin ?? ['http://localhost:8233', 'http://127.0.0.1:8233'];
      let server;
      try {
        server = await startCodecServer({ dataConverter, ip: flags.ip, port: flags.port, allowedOrigins, token });
      } catch (err) {
        throw new CliError(`Cannot listen on ${flags.ip}:${flags.port} (${(err as Error).message}): choose another --port.`, EXIT.failure);
      }
      process.stdout.write(
        `codec server: ${server.url} (POST /encode, /decode)${token ? ', bearer token required' : ''}\n` +
          `CORS origins: ${allowedOrigins.join(', ')}\n` +
          `Web UI: Settings → Codec Server → ${server.url}; CLI: temporal workflow show --codec-endpoint ${server.url} -w <id>\n`,
      );
      await untilSignal();
      await server.close();
    });
}
