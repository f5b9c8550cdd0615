/**
 * Tool services in processes of their own: the TypeScript order desk (tool-worker-process.ts,
 * forkflow's helper) and the Python one (py/tool_service.py, the contract alone, in the venv
 * scripts/install-py-tool-service.sh creates from PyPI). Each is ready when it says it polls.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { run } from './processes';

const root = join(__dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  output(): string;
  /** SIGKILL by default: a worker lost, not stopped. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

async function startProcess(command: string, args: string[], ready: RegExp, what: string): Promise<ServiceProcess> {
  const child = spawn(command, args, { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (ready.test(out)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`${what} exited early (${code}): ${out}`)));
  });
  return {
    child,
    pid: child.pid!,
    output: () => out,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}

/** The TypeScript order desk on `taskQueue`, in a process of its own. */
export function startTsToolWorker(o: { address: string; namespace: string; taskQueue: string; stateDir: string }): Promise<ServiceProcess> {
  return startProcess(process.execPath, ['-r', require.resolve('tsx/cjs'), join(__dirname, 'tool-worker-process.ts'), o.address, o.namespace, o.taskQueue, o.stateDir], /tool worker polling/, 'the TypeScript tool worker');
}

/** The venv's python (installing it on first use: a minute or two, once per machine). */
export async function pythonForToolService(): Promise<string> {
  const installed = await run('bash', [join(root, 'scripts', 'install-py-tool-service.sh')], { timeoutMs: 600_000 });
  if (installed.status !== 0) throw new Error(`could not install the Python tool service's venv: ${installed.stderr}`);
  return installed.stdout.trim().split('\n').at(-1)!;
}

/** The Python order desk on `taskQueue`, in a process of its own. */
export async function startPythonToolWorker(o: { address: string; namespace: string; taskQueue: string; stateDir: string }): Promise<ServiceProcess> {
  const python = await pythonForToolService();
  return startProcess(python, [join(__dirname, 'py', 'tool_service.py'), o.address, o.namespace, o.taskQueue, o.stateDir], /python tool worker polling/, 'the Python tool worker');
}
