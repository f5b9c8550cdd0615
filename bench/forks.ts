/**
 * `npm run bench:fork`: what forking costs as the number of siblings and the parent's size
 * grow. For 1, 2, 4, 8, 16 and 32 siblings of a 20 KB and a 400 KB parent (zero-copy, from
 * one recorded snapshot): fork start latency (start call → its first model request), history
 * bytes per fork, and the first turn's cache-read share of siblings 2..N (started once the
 * first sibling's response has begun, as the provider's cache requires). Then 32 siblings
 * started at once by reference against 32 empty workflows on the same server (bench/siblings.ts).
 */
import { temporal } from '@temporalio/proto';
import { totalInputTokens } from '../src/shared/messages-api/anthropic';
import { bigSnapshot } from '../test/kit/snapshots';
import { NativeConnection } from '@temporalio/worker';
import { median, printTable, startBenchStack } from './kit';
import { siblingLatency } from './siblings';

const SIBLINGS = [1, 2, 4, 8, 16, 32];
const PARENT_BYTES = [20_000, 400_000];

async function main(): Promise<void> {
  const bench = await startBenchStack('forks');
  const { client, model } = bench;
  const rows: [string, string][] = [];
  for (const bytes of PARENT_BYTES) {
    for (const n of SIBLINGS) {
      const snapshot = bigSnapshot({ conversationBytes: bytes, pendingToolUses: n });
      // A distinct system prompt per run keeps earlier runs' cache entries out of the figures.
      snapshot.system = `${typeof snapshot.system === 'string' ? snapshot.system : ''}\nrun ${bytes}-${n}`;
      const ref = await client.recordSnapshot(snapshot);
      model.log.clear();
      const run = `${bytes}-${n}-${Date.now()}`;
      const starts: number[] = [];
      const startOne = async (i: number) => {
        const t0 = Date.now();
        const handle = await client.start({ agentId: `bench-fork-${run}-${i}`, parentRef: ref, prompt: `Sibling ${i} of run ${run}.\n@reply ok`, budget: { maxTokens: 10_000_000 } });
        const first = await model.log.waitFor((e) => e.rawBody.includes(`Sibling ${i} of run ${run}.`), { timeoutMs: 60_000 });
        starts.push(first.receivedAt - t0);
        return handle;
      };
      const first = await startOne(0);
      await model.log.waitFor((e) => e.responseBeganAt !== undefined && e.rawBody.includes(`Sibling 0 of run ${run}.`));
      const rest = await Promise.all(Array.from({ length: n - 1 }, (_, i) => startOne(i + 1)));
      const handles = [first, ...rest];
      await Promise.all(handles.map((h) => h.result()));

      const historyBytes = await Promise.all(
        handles.map(async (h) => temporal.api.history.v1.History.encode(await client.temporal.workflow.getHandle(h.agentId).fetchHistory()).finish().length),
      );
      const shares = model.log
        .entries()
        .filter((e) => e.usage && !e.rawBody.includes(`Sibling 0 of run ${run}.`))
        .map((e) => {
          const u = { inputTokens: e.usage!.input_tokens, outputTokens: 0, cacheReadInputTokens: e.usage!.cache_read_input_tokens ?? 0, cacheCreationInputTokens: e.usage!.cache_creation_input_tokens ?? 0 };
          return u.cacheReadInputTokens / totalInputTokens(u);
        });
      const share = shares.length ? `read share median ${median(shares).toFixed(3)}, min ${Math.min(...shares).toFixed(3)}` : 'read share n/a (one fork)';
      rows.push([`${bytes / 1000} KB parent, ${String(n).padStart(2)} siblings`, `start ${median(starts)} ms median · history ${Math.round(median(historyBytes))} B/fork · ${share}`]);
      process.stderr.write('.');
    }
  }
  printTable('forkflow bench:fork — zero-copy siblings from one snapshot (offline model, no latency)', rows);

  const connection = await NativeConnection.connect({ address: bench.stack.server.address });
  try {
    const snapshot = bigSnapshot({ conversationBytes: 20_000, pendingToolUses: 32 });
    snapshot.system = `${typeof snapshot.system === 'string' ? snapshot.system : ''}\nsibling latency ${Date.now()}`;
    const l = await siblingLatency({ client, model, connection, namespace: bench.stack.server.namespace, snapshot, n: 32 });
    printTable('forkflow bench:fork — 32 siblings at once by reference vs 32 empty workflows (same server, same run)', [
      ['siblings: start → first model request p50 / p95', `${l.sibling.p50} / ${l.sibling.p95} ms`],
      ['empty workflows: start → completed p50 / p95', `${l.empty.p50} / ${l.empty.p95} ms`],
      ['sibling p95 / empty p95 (target ≤ 2)', l.ratio.toFixed(2)],
      ['a sibling by phase, p50 / p95 (from its history)', ''],
      ...l.phases.map((ph): [string, string] => [`  ${ph.name}`, `${ph.p50} / ${ph.p95} ms`]),
    ]);
  } finally {
    await connection.close();
  }
  await bench.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
