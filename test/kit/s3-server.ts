/**
 * A real S3-compatible server for tests: versitygw (scripts/install-versitygw.sh builds it
 * into .tools/) serving a temp folder through its posix backend, on a free loopback port,
 * with one bucket created. Tests talk to it with the AWS SDK, as a deployment talks to S3.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../../src/worker/dev-server';
import { tempDir } from './env';
import { run } from './processes';
import { waitFor } from './wait';

const root = join(__dirname, '..', '..');
/** Keep in step with VERSION in scripts/install-versitygw.sh. */
const VERSITYGW = join(root, '.tools', 'versitygw-v1.8.0', 'versitygw');

export interface S3Server {
  endpoint: string;
  bucket: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The folder the posix backend keeps the bucket in. */
  dir: string;
  /** A client of the bucket's own (path style, the server's credentials). */
  client: S3Client;
  /** Every object key in the bucket (all pages). */
  keys(prefix?: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Builds versitygw on first use (minutes, once per machine), then waits on nothing. */
export async function installVersitygw(): Promise<string> {
  const installed = await run('bash', [join(root, 'scripts', 'install-versitygw.sh')], { timeoutMs: 14 * 60_000 });
  if (installed.status !== 0) throw new Error(`scripts/install-versitygw.sh failed: ${installed.stderr}`);
  return VERSITYGW;
}

export async function startS3Server(bucket = 'forkflow-test'): Promise<S3Server> {
  const binary = await installVersitygw();
  const dir = tempDir('s3');
  mkdirSync(join(dir, 'meta'));
  mkdirSync(join(dir, 'data'));
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: `test${randomBytes(4).toString('hex')}`, secretAccessKey: randomBytes(16).toString('hex') };
  const region = 'us-east-1';
  // The sidecar folder keeps object metadata in files: temp folders may not support xattrs.
  const child = spawn(binary, ['--port', `127.0.0.1:${port}`, '--access', credentials.accessKeyId, '--secret', credentials.secretAccessKey, '--region', region, '--quiet', 'posix', '--sidecar', join(dir, 'meta'), join(dir, 'data')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = once(child, 'exit');
  const early = exited.then(([code]) => Promise.reject(new Error(`versitygw exited early (${String(code)}): ${out}`)));
  early.catch(() => undefined); // it is raced once, below; its later settling on close is expected
  const client = new S3Client({ endpoint, region, credentials, forcePathStyle: true });
  // Ready once it answers a request: creating the bucket is that request.
  await Promise.race([
    waitFor(async () => (await client.send(new CreateBucketCommand({ Bucket: bucket })), true), `versitygw on ${endpoint} to create bucket ${bucket}`),
    early,
  ]);
  return {
    endpoint,
    bucket,
    region,
    credentials,
    dir,
    client,
    async keys(prefix) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token, ...(prefix ? { Prefix: prefix } : {}) }));
        keys.push(...(page.Contents ?? []).map((o) => o.Key!));
        token = page.NextContinuationToken;
      } while (token);
      return keys;
    },
    async close() {
      client.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
