/**
 * The file `npm run stack` (scripts/stack/) writes when it leaves a self-hosted Temporal
 * stack running: where its front end and Web UI are. Read by `forkflow demo --stack`.
 * One schema for writer and readers; versioned.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const Port = z.number().int().min(1).max(65535);

export const StackState = z.object({
  v: z.literal(1),
  address: z.string().min(1),
  namespace: z.string().min(1),
  uiUrl: z.string().url(),
  ports: z.object({
    frontend: Port,
    frontendHttp: Port,
    history: Port,
    matching: Port,
    worker: Port,
    // The server keeps membership ports in a smallint column.
    membership: z.tuple([Port, Port, Port, Port]).refine((ports) => ports.every((p) => p < 32768), 'membership ports must be below 32768'),
    metrics: Port,
    postgres: Port,
    ui: Port,
  }),
  pids: z.object({ server: z.number().int(), ui: z.number().int() }),
  startedAt: z.string(),
  /** Set when the stack requires mutual TLS (FORKFLOW_STACK_MTLS=1): the files a client connects with. */
  tls: z.object({ ca: z.string(), cert: z.string(), key: z.string(), serverName: z.string() }).optional(),
});
export type StackState = z.infer<typeof StackState>;
export type StackPorts = StackState['ports'];

/** The SDK's TLS settings for a stack that requires mutual TLS (its state's `tls`), or undefined. */
export function stackTlsConfig(tls: StackState['tls']): { serverRootCACertificate: Buffer; clientCertPair: { crt: Buffer; key: Buffer }; serverNameOverride: string } | undefined {
  if (!tls) return undefined;
  return { serverRootCACertificate: readFileSync(tls.ca), clientCertPair: { crt: readFileSync(tls.cert), key: readFileSync(tls.key) }, serverNameOverride: tls.serverName };
}

/** `.forkflow/stack` of the working directory: where `npm run stack` keeps the stack. */
export function defaultStackDir(cwd = process.cwd()): string {
  return join(cwd, '.forkflow', 'stack');
}

export function stackStatePath(dir: string): string {
  return join(dir, 'stack.json');
}

/** The running stack's state, or undefined when none was left running. */
export function readStackState(dir: string): StackState | undefined {
  const path = stackStatePath(dir);
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, 'utf8').trim();
  if (text === '') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON; run \`npm run stack\` again`);
  }
  const parsed = StackState.safeParse(json);
  if (!parsed.success) throw new Error(`${path} is not a stack state this version understands (${parsed.error.issues[0]?.message}); run \`npm run stack\` again`);
  return parsed.data;
}
