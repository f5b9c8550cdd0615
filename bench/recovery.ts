/**
 * `npm run bench:recovery`: how long a model call stands still when the worker running it
 * goes away. Two worker processes serve one task queue; a fork's model call is held in
 * flight by the offline model; the worker holding it (the pending activity's last worker
 * identity) is sent SIGKILL, or SIGTERM, and the time from the signal to the retried call's
 * request arriving at the model is measured. 20 of each. Goals: ≤ 3 s after SIGKILL (the
 * heartbeat timeout plus the first retry interval), ≤ 0.5 s after SIGTERM (the shutting
 * worker hands the call back at once).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForkflowClient } from '../src/client';
import { bundleForkflowWorkflows } from '../src/worker/bundle';
import { startWorkerProcess, type WorkerProcess } from '../test/kit/processes';
import { median, percentile, printTable, startBenchStack } from './kit';

const ROUNDS = Number(process.env.BENCH_RECOVERY_ROUNDS ?? 20);

async function main(): Promise<void> {
  const bench = await startBenchStack('recovery');
  const { model, stack } = bench;
  const bundlePath = join(bench.workspace, 'workflow-bundle.js');
  writeFileSync(bundlePath, await bundleForkflowWorkflows());
  const taskQueue = `bench-recovery-${Date.now()}`;
  const start = (identity: string) =>
    startWorkerProcess({ address: stack.server.address, taskQueue, modelUrl: model.url, workspace: bench.workspace, bundlePath, extraArgs: ['--identity', identity] });
  const workers = new Map<string, WorkerProcess>();
  let next = 0;
  const add = async () => {
    const identity = `bench-worker-${next++}`;
    workers.set(identity, await start(identity));
  };
  await add();
  await add();
  const forkflow = new ForkflowClient(bench.client.temporal, { taskQueue });

  const figures: Record<'SIGKILL' | 'SIGTERM', number[]> = { SIGKILL: [], SIGTERM: [] };
  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    for (let round = 0; round < ROUNDS; round++) {
      const tag = `Recovery ${signal} round ${round} at ${Date.now()}.`;
      // The first attempt is held for a minute: only the retry can finish the call soon.
      const handle = await forkflow.start({ agentId: `bench-recovery-${signal}-${round}-${Date.now()}`, prompt: `${tag}\n@sleep 60000 @reply late` });
      const first = await model.log.waitFor((e) => e.outcome === 'pending' && e.rawBody.includes(tag), { timeoutMs: 30_000 });
      const describe = await bench.client.temporal.workflow.getHandle(handle.agentId).describe();
      const holder = describe.raw.pendingActivities?.find((a) => a.activityType?.name === 'callModel')?.lastWorkerIdentity ?? '';
      const victim = workers.get(holder);
      if (!victim) throw new Error(`no worker named "${holder}" holds the call`);
      workers.delete(holder);
      const signalledAt = Date.now();
      victim.child.kill(signal);
      const retry = await model.log.waitFor((e) => e.seq > first.seq && e.rawBody.includes(tag), { timeoutMs: 30_000 });
      figures[signal].push(retry.receivedAt - signalledAt);
      await forkflow.cancel(handle.agentId);
      await victim.kill();
      await add();
      process.stderr.write('.');
    }
  }
  const row = (values: number[], goal: number): string =>
    `median ${median(values)} ms · p90 ${percentile(values, 90)} ms · max ${Math.max(...values)} ms · min ${Math.min(...values)} ms (goal ≤ ${goal} ms; ${values.filter((v) => v <= goal).length}/${values.length} within)`;
  printTable(`forkflow bench:recovery — signal to the interrupted model call's retry reaching the model (${ROUNDS} rounds each)`, [
    ['after SIGKILL', row(figures.SIGKILL, 3000)],
    ['after SIGTERM', row(figures.SIGTERM, 500)],
  ]);
  for (const w of workers.values()) await w.kill();
  await bench.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
