/**
 * `npm run bench:hosts`: fork throughput on the self-hosted stack (scripts/stack/) with one
 * worker host and with three. Each host is a `forkflow worker` process with its own checkout
 * and the capacity of a small machine (FORKFLOW_MAX_CONCURRENT_ACTIVITIES=4); the offline
 * model takes 300 ms a call. The same batch of forks (3 model calls and 2 Read calls each)
 * runs on a task queue of its own per configuration.
 *
 * On this 2-core machine every host, the server and PostgreSQL share the same cores, so the
 * figure says how far placement scales out before the machine does, not what three real
 * machines would do.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForkflowClient } from '../src/client';
import { startWorkerProcess, type WorkerProcess } from '../test/kit/processes';
import { startStackHarness } from '../test/kit/stack';
import { uniqueTaskQueue } from '../test/kit/env';
import { median, printTable } from './kit';

const FORKS = 48;
const SLOTS = 4;
const CALL_MS = 300;
const prompt = (id: string) => [`Throughput fork ${id}.`, `@repeat 2 @sleep ${CALL_MS} @tool Read {"file_path":"notes.txt"}`, `@sleep ${CALL_MS} @reply ${id} done`].join('\n');

async function main(): Promise<void> {
  const h = await startStackHarness('bench-hosts');
  const origin = join(h.dir, 'origin');
  mkdirSync(origin);
  writeFileSync(join(origin, 'notes.txt'), 'alpha\nbeta\n');
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' });
  git(origin, 'init', '-q', '-b', 'main');
  git(origin, 'add', 'notes.txt');
  git(origin, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '-m', 'notes');
  const rows: [string, string][] = [];
  try {
    for (const count of [1, 3]) {
      const taskQueue = uniqueTaskQueue(`hosts-${count}`);
      const forkflow = new ForkflowClient(h.client, { taskQueue });
      const hosts: WorkerProcess[] = [];
      for (let i = 0; i < count; i++) {
        const checkout = join(h.dir, `${count}-${i}`, 'repo');
        mkdirSync(join(h.dir, `${count}-${i}`), { recursive: true });
        git(h.dir, 'clone', '-q', origin, checkout);
        hosts.push(
          await startWorkerProcess({
            address: h.stack.address,
            taskQueue,
            modelUrl: h.model.url,
            workspace: checkout,
            bundlePath: h.bundlePath,
            extraArgs: ['--host', `host-${i}`],
            extraEnv: { FORKFLOW_MAX_CONCURRENT_ACTIVITIES: String(SLOTS), FORKFLOW_RESPONSE_DIR: join(h.dir, `${count}-${i}`, 'responses') },
          }),
        );
      }
      try {
        const ids = Array.from({ length: FORKS }, (_, i) => `tp-${count}-${i}`);
        const t0 = Date.now();
        await Promise.all(ids.map((id) => forkflow.start({ agentId: id, prompt: prompt(id) })));
        const done: number[] = [];
        const results = await Promise.all(ids.map((id) => forkflow.result(id).then((r) => (done.push(Date.now() - t0), r))));
        const wall = Date.now() - t0;
        const failed = results.filter((r) => r.status !== 'completed').length;
        rows.push([`${count} host${count > 1 ? 's' : ''}: ${FORKS} forks, wall`, `${(wall / 1000).toFixed(1)} s (${failed} failed)`]);
        rows.push([`${count} host${count > 1 ? 's' : ''}: forks per minute`, (FORKS / (wall / 60_000)).toFixed(0)]);
        rows.push([`${count} host${count > 1 ? 's' : ''}: fork latency, median`, `${(median(done) / 1000).toFixed(1)} s`]);
      } finally {
        for (const w of hosts) await w.kill('SIGTERM');
      }
    }
  } finally {
    await h.close();
  }
  printTable(`Fork throughput on the stack: 1 host vs 3 (each ${SLOTS} activity slots; model ${CALL_MS} ms a call; 3 calls + 2 tools a fork)`, rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
