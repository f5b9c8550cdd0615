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
import { join } from 'node:path';
import { ForkflowClient } from '../src/client';
import { startWorkerProcess, type WorkerProcess } from '../test/kit/processes';
import { hostCheckouts, startStackHarness } from '../test/kit/stack';
import { uniqueTaskQueue } from '../test/kit/env';
import { median, printTable } from './kit';

const FORKS = 48;
const SLOTS = 4;
const CALL_MS = 300;
const prompt = (id: string) => [`Throughput fork ${id}.`, `@repeat 2 @sleep ${CALL_MS} @tool Read {"file_path":"notes.txt"}`, `@sleep ${CALL_MS} @reply ${id} done`].join('\n');

async function main(): Promise<void> {
  const h = await startStackHarness('bench-hosts');
  const rows: [string, string][] = [];
  try {
    for (const count of [1, 3]) {
      const taskQueue = uniqueTaskQueue(`hosts-${count}`);
      const forkflow = new ForkflowClient(h.client, { taskQueue });
      const hosts: WorkerProcess[] = [];
      const checkouts = hostCheckouts(join(h.dir, `run-${count}`), Array.from({ length: count }, (_, i) => `host-${i}`));
      for (const [i, checkout] of [...checkouts.values()].entries()) {
        hosts.push(
          await startWorkerProcess({
            address: h.stack.address,
            taskQueue,
            modelUrl: h.model.url,
            workspace: checkout,
            bundlePath: h.bundlePath,
            extraArgs: ['--host', `host-${i}`],
            extraEnv: { FORKFLOW_MAX_CONCURRENT_ACTIVITIES: String(SLOTS), FORKFLOW_RESPONSE_DIR: join(checkout, '..', 'responses') },
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
