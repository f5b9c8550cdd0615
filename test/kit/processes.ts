/**
 * Real processes for end-to-end tests: the forkflow CLI (from source) as a worker or a
 * one-shot command, and the `temporal` CLI binary. A worker is "ready" when it says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayCounts } from '../../src/gateway/gateway';
import { resolveTemporalCli } from '../../src/worker/temporal-cli';

const root = join(__dirname, '..', '..');
const cliEntry = join(__dirname, 'forkflow-cli.ts');

export function forkflowArgs(args: string[]): string[] {
  return ['-r', require.resolve('tsx/cjs'), cliEntry, ...args];
}

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `forkflow worker` in its own process and resolves once it is polling. */
export async function startWorkerProcess(opts: { address: string; taskQueue: string; modelUrl: string; workspace: string; bundlePath: string; extraEnv?: Record<string, string>; extraArgs?: string[] }): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    forkflowArgs(['--address', opts.address, '--task-queue', opts.taskQueue, 'worker', '--workspace', opts.workspace, '--workflow-bundle', opts.bundlePath, ...(opts.extraArgs ?? [])]),
    {
      cwd: root,
      env: { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: opts.modelUrl, FORKFLOW_LOG_LEVEL: 'WARN', ...opts.extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('worker polling')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${out}`)));
  });
  await ready;
  return {
    child,
    output: () => out,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}

export interface ProcessResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion without blocking this process's event loop (a worker
 * running in the test process must keep answering queries meanwhile).
 */
export async function run(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<ProcessResult> {
  const child = spawn(command, args, { cwd: opts.cwd ?? root, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const [status] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { status, stdout, stderr };
}

/** Runs the forkflow CLI (from source) to completion. */
export function runForkflow(args: string[], env: Record<string, string> = {}): Promise<ProcessResult> {
  return run(process.execPath, forkflowArgs(args), { env: { ...process.env, ...env } });
}

/** Runs the real `temporal` CLI binary. */
export function runTemporal(args: string[]): Promise<ProcessResult> {
  const cli = resolveTemporalCli({ allowDownload: false });
  if (cli.kind !== 'binary') throw new Error('no temporal binary');
  return run(cli.path, args, { timeoutMs: 60_000 });
}

/**
 * The `temporal` CLI and the forkflow CLI bound to a test server and task queue: `temporal`
 * resolves with stdout and throws on a non-zero exit; `cli` resolves with the whole result.
 */
export function boundClis(env: { address: string; namespace: string }, taskQueue: string) {
  return {
    async temporal(...args: string[]): Promise<string> {
      const r = await runTemporal([...args, '--address', env.address, '--namespace', env.namespace]);
      if (r.status !== 0) throw new Error(`temporal ${args.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
      return r.stdout;
    },
    cli: (...args: string[]): Promise<ProcessResult> => runForkflow(['--address', env.address, '--task-queue', taskQueue, ...args]),
  };
}

/** One exchange the offline model process finished (completed, aborted, rejected or fault). */
export interface ServedEntry {
  seq: number;
  /** `/v1/messages` or `/v1/chat/completions`. */
  path?: string;
  outcome: string;
  /** When the model finished with it (ms since the epoch, the model process's clock). */
  endedAt?: number;
  rawBody: string;
}

export interface ModelProcess {
  url: string;
  /** What the model has finished so far, from its own log file. */
  served(): ServedEntry[];
  kill(): Promise<void>;
}

/** Starts the offline model in a process of its own (test/kit/model-process.ts). */
export async function startModelProcess(logFile: string): Promise<ModelProcess> {
  const child = spawn(process.execPath, ['-r', require.resolve('tsx/cjs'), join(__dirname, 'model-process.ts'), logFile], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /model listening (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`model process exited early (${code}): ${out}`)));
  });
  return {
    url,
    served: () =>
      (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ServedEntry),
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface GatewayProcess {
  url: string;
  /** Stops it (SIGTERM) and returns what it did, from the summary it prints on the way out. */
  stop(): Promise<GatewayCounts>;
}

/** Starts `forkflow gateway` in its own process in front of `upstream` (and the named providers of `extraEnv.FORKFLOW_PROVIDERS`). */
export async function startGatewayProcess(upstream: string, dir: string, extraEnv: Record<string, string> = {}): Promise<GatewayProcess> {
  const child = spawn(process.execPath, forkflowArgs(['gateway', '--port', '0', '--upstream', upstream, '--dir', dir]), { cwd: root, env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const m = /model gateway listening (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`gateway exited early (${code}): ${out}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      const m = /model gateway stopped: (\{.*\})/.exec(out);
      if (!m) throw new Error(`the gateway printed no summary: ${out}`);
      return JSON.parse(m[1]!) as GatewayCounts;
    },
  };
}
