/**
 * Zero-copy prefixes: a parent context of 400 KB is recorded in Temporal history once (by a
 * snapshot workflow), eight forks reference it and add only a few KB each, and a fork whose
 * worker dies mid-call resumes on a fresh worker that reads the prefix from the closed parent.
 */
import { tmpdir } from 'node:os';
import { temporal } from '@temporalio/proto';
import { ForkflowClient } from '../../src/client';
import { canonicalJson, utf8Length } from '../../src/shared/base/hash';
import { startHarness, uniqueTaskQueue, type Harness } from '../kit/env';
import { startWorkerProcess } from '../kit/processes';
import { bodyOf } from '../kit/requests';
import { bigSnapshot } from '../kit/snapshots';
import { recordHistory } from '../kit/histories';
import { rawHistory, recordedBytes } from '../kit/raw-history';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'zerocopy' });
});
afterAll(() => h.close());

/**
 * A fork's history in bytes, less the bytes of where this run happens to be: its workspace, the
 * run's temp folder and the clone are made wherever the newcomer cloned (a deep `mktemp -d`
 * folder, a home), their paths are recorded in the fork's input and events, and they are no
 * part of what zero-copy promises.
 */
async function historyBytes(workflowId: string): Promise<number> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  let text = Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('latin1');
  for (const place of [h.workspaceRoot, tmpdir(), process.cwd()].sort((a, b) => b.length - a.length)) text = text.split(Buffer.from(place).toString('latin1')).join('');
  return text.length;
}

test('8 forks of a 400 KB parent add no more history than a fork of a 2 KB parent (about 8 KB each); the prefix is recorded once', async () => {
  const snapshot = bigSnapshot({ conversationBytes: 420_000, pendingToolUses: 8 });
  const snapshotBytes = utf8Length(canonicalJson(snapshot));
  expect(snapshotBytes).toBeGreaterThan(400_000);

  const before = { ...h.conversations.stats };
  const forks = await h.forkflow.forkMany(
    snapshot,
    [0, 1, 2, 3, 4, 5, 6, 7].map((i) => ({ agentId: `zc-${i}`, forkLabel: 'zero-copy', prompt: `Part ${i}.\n@reply part ${i} done`, budget: { maxTokens: 1_000_000 } })),
  );
  const results = await Promise.all(forks.map((f) => f.result()));
  expect(results.map((r) => r.text)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => `part ${i} done`));
  // The worker read the prefix and its context once for all eight, from the snapshot's start
  // event (its input is in the blob store) rather than by asking the closed run, and no
  // fork's first call asked its own workflow for its opening (built from the call's recipe,
  // proven by its digest).
  expect(h.conversations.stats.snapshotReads - before.snapshotReads).toBe(2);
  expect(h.conversations.stats.queries - before.queries).toBe(0);

  const perFork = await Promise.all(forks.map((f) => historyBytes(f.agentId)));
  console.log(`zero-copy: snapshot ${snapshotBytes} B; fork histories ${perFork.join(', ')} B`);
  // Where the run is (a deep clone or temp folder) changes every history's size: each fork of
  // the 400 KB parent must add no more than a fork of a 2 KB parent made here, plus 1 KB.
  const [small] = await h.forkflow.forkMany(bigSnapshot({ conversationBytes: 2_000, pendingToolUses: 8 }), [{ agentId: 'zc-small', forkLabel: 'zero-copy', prompt: 'Part 9.\n@reply part 9 done', budget: { maxTokens: 1_000_000 } }]);
  expect((await small!.result()).text).toBe('part 9 done');
  const baseline = await historyBytes('zc-small');
  console.log(`zero-copy: a fork of a 2 KB parent ${baseline} B`);
  for (const bytes of perFork) expect(bytes).toBeLessThanOrEqual(baseline + 1024);

  // The prefix lives in the snapshot workflow's history, once (inline, or as a reference to
  // the blob store when over the storage threshold): recording it again finds that run.
  const ref = await h.forkflow.recordSnapshot(snapshot);
  expect(recordedBytes(await rawHistory(h.client, ref.run.workflowId))).toBeGreaterThan(400_000);
  const runs = [];
  for await (const run of h.client.workflow.list({ query: `WorkflowId = '${ref.run.workflowId}'` })) runs.push(run.runId);
  expect(runs).toEqual([ref.run.runId]);
  expect((await h.client.workflow.getHandle(ref.run.workflowId).describe()).status.name).toBe('COMPLETED');

  // The client reassembles the whole conversation from the reference.
  const transcript = await h.forkflow.transcript('zc-3');
  expect(transcript.slice(0, snapshot.messages.length)).toEqual(snapshot.messages);
  expect(transcript).toHaveLength(snapshot.messages.length + 2);
  await recordHistory(h.client.workflow.getHandle('zc-3'), 'fork-by-reference');
});

test('a fork resumes on a fresh worker after its parent closed, reading the prefix from the closed run', async () => {
  const taskQueue = uniqueTaskQueue('zc-resume');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const opts = { address: h.env.address, taskQueue, modelUrl: h.model.url, workspace: h.workspaceRoot, bundlePath: h.env.bundlePath };
  let worker = await startWorkerProcess(opts);
  try {
    const snapshot = bigSnapshot({ conversationBytes: 60_000, pendingToolUses: 1 });
    const [handle] = await forkflow.forkMany(snapshot, [{ agentId: 'zc-resume', prompt: 'Slow.\n@sleep 3000 @reply resumed' }]);
    const ref = await forkflow.recordSnapshot(snapshot);
    expect((await h.client.workflow.getHandle(ref.run.workflowId).describe()).status.name).toBe('COMPLETED');

    const inFlight = await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Slow.'), { timeoutMs: 60_000 });
    await worker.kill('SIGKILL');
    worker = await startWorkerProcess(opts);
    const result = await handle!.result();
    expect(result).toMatchObject({ status: 'completed', text: 'resumed' });
    // The fresh worker, which never saw the prefix, rebuilt the killed worker's request byte for byte.
    const retried = h.model.log.entries().filter((e) => e.seq > inFlight.seq && e.outcome === 'completed' && JSON.stringify(e.body ?? '').includes('Slow.'));
    expect(retried).toHaveLength(1);
    expect(inFlight.rawBody.length).toBeGreaterThan(60_000);
    expect(retried[0]!.rawBody).toBe(inFlight.rawBody);
    expect(bodyOf(retried[0]!).messages).toHaveLength(snapshot.messages.length + 1);
    await recordHistory(h.client.workflow.getHandle(ref.run.workflowId), 'snapshot-workflow');
  } finally {
    await worker.kill();
  }
});
