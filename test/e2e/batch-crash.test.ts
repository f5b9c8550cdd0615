/**
 * Delivery `batch` crash-exact, end to end: a batched fork's worker process is SIGKILLed
 * while its first batch is in progress (between submit and result), and again while the
 * results of its second batch are being read (the offline model holds that read open). Each
 * time a new worker process takes the call over. The offline model's own log and accounting
 * show every request submitted once, processed once and billed once, with forkflow's usage
 * equal to what the model billed (a result applied twice would count twice), and the
 * transcript is the uninterrupted run's. The emulated clock moves only when the test says.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import type { RequestLogEntry } from '../../src/offline';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { script, toolStep } from '../kit/tree';

const PROCESSING_MS = 5 * 60_000;

let h: Harness;
let jumpOnCreate = true;
const seen = new Set<number>();
const responses = tempDir('batch-responses');

const isCreate = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/messages/batches';
const isResults = (e: RequestLogEntry) => e.method === 'GET' && e.path.endsWith('/results');
const isRetrieve = (e: RequestLogEntry) => e.method === 'GET' && /^\/v1\/messages\/batches\/[^/?]+$/.test(e.path);
const customIdsOf = (e: RequestLogEntry) => (e.body as { requests: { custom_id: string }[] }).requests.map((r) => r.custom_id);
const prompt = script('Survey the notes.', toolStep('Glob', { pattern: '*' }), toolStep('Read', { file_path: 'notes.md' }), '@reply surveyed');

beforeAll(async () => {
  h = await startHarness({ name: 'batch-crash', noWorker: true, model: { batchProcessingMs: PROCESSING_MS } });
  writeFileSync(join(h.workspaceRoot, 'notes.md'), 'the notes\n');
  h.model.log.on('update', (e: RequestLogEntry) => {
    if (!isCreate(e) || e.outcome !== 'completed' || seen.has(e.seq)) return;
    seen.add(e.seq);
    if (jumpOnCreate) h.model.clock.advance(PROCESSING_MS);
  });
});
afterAll(() => h?.close());

function worker(): Promise<WorkerProcess> {
  return startWorkerProcess({
    address: h.env.address,
    taskQueue: h.taskQueue,
    modelUrl: h.model.url,
    workspace: h.workspaceRoot,
    bundlePath: h.env.bundlePath,
    extraEnv: { FORKFLOW_RESPONSE_DIR: responses, FORKFLOW_BATCH_POLL_MS: '50', FORKFLOW_BATCH_WINDOW_MS: '50' },
  });
}

test('SIGKILLed between submit and result, and again while results are read: every request submitted once, every result applied once', async () => {
  const forkflow = h.forkflow;
  let w = await worker();
  try {
    // The reference: the same script, batched, uninterrupted.
    const reference = await forkflow.fork({ agentId: 'bc-reference', prompt, delivery: 'batch' }, { mode: 'sync' });
    expect(reference).toMatchObject({ status: 'completed', text: 'surveyed' });
    const referenceTranscript = await forkflow.transcript('bc-reference');

    h.model.log.clear();
    const processedBefore = h.model.batches.entries().length;
    jumpOnCreate = false;
    const handle = await forkflow.fork({ agentId: 'bc-crash', prompt, delivery: 'batch' }, { mode: 'forget' });

    // 1. The first batch is in progress and polled: the worker dies.
    const first = await h.model.log.waitFor((e) => isCreate(e) && e.outcome === 'completed', { timeoutMs: 60_000 });
    const firstBatch = h.model.batches.ids().slice(-1)[0]!;
    await h.model.log.waitFor((e) => isRetrieve(e) && e.path.endsWith(firstBatch), { timeoutMs: 60_000 });
    await w.kill('SIGKILL');
    const killedAt = Math.max(...h.model.log.entries().map((e) => e.seq));
    w = await worker();
    // The new worker's retry polls the batch already submitted; then the provider finishes it.
    await h.model.log.waitFor((e) => e.seq > killedAt && isRetrieve(e) && e.path.endsWith(firstBatch), { timeoutMs: 60_000 });
    // 2. The next batch's results are held open by the provider; the worker dies while reading them.
    h.model.faults.add({ kind: 'latency', ms: 120_000, match: (e) => isResults(e) && !e.path.includes(firstBatch) });
    jumpOnCreate = true;
    h.model.clock.advance(PROCESSING_MS);
    const reading = await h.model.log.waitFor((e) => isResults(e) && !e.path.includes(firstBatch) && e.outcome === 'pending', { timeoutMs: 60_000 });
    await w.kill('SIGKILL');
    await h.model.log.waitFor((e) => e.seq === reading.seq && e.outcome === 'aborted');
    w = await worker();

    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'surveyed', toolUses: 2 });
    expect(await forkflow.transcript('bc-crash')).toEqual(referenceTranscript);

    // The offline model's log: three creates, each custom_id once; nothing asked interactively.
    const log = h.model.log.entries();
    const creates = log.filter(isCreate);
    expect(creates[0]!.seq).toBe(first.seq);
    const customIds = creates.flatMap(customIdsOf);
    expect(customIds).toHaveLength(3);
    expect(new Set(customIds).size).toBe(3);
    expect(log.filter((e) => e.method === 'POST' && e.path === '/v1/messages')).toHaveLength(0);
    // The second batch's results were read twice (the first read cut short), the request processed once.
    expect(log.filter((e) => isResults(e) && e.path.includes(reading.path.split('/')[4]!)).map((e) => e.outcome)).toEqual(['aborted', 'completed']);
    const processed = h.model.batches.entries().slice(processedBefore);
    expect(processed.map((p) => [p.customId, p.result])).toEqual(customIds.map((c) => [c, 'succeeded']));
    // Applied once: forkflow's usage is what the model billed for those three requests, no more.
    const billed = { input: 0, output: 0, cacheRead: 0 };
    for (const p of processed) {
      billed.input += p.usage?.input_tokens ?? 0;
      billed.output += p.usage?.output_tokens ?? 0;
      billed.cacheRead += p.usage?.cache_read_input_tokens ?? 0;
    }
    expect({ input: result.usage.inputTokens, output: result.usage.outputTokens, cacheRead: result.usage.cacheReadInputTokens }).toEqual(billed);
    expect(result.usage.batch?.outputTokens).toBe(billed.output);
    // One model call recorded per turn in the history, as in the uninterrupted run.
    const events = (await h.client.workflow.getHandle('bc-crash').fetchHistory()).events ?? [];
    const completedCalls = events.filter((e) => e.activityTaskCompletedEventAttributes).length;
    const referenceEvents = (await h.client.workflow.getHandle('bc-reference').fetchHistory()).events ?? [];
    expect(completedCalls).toBe(referenceEvents.filter((e) => e.activityTaskCompletedEventAttributes).length);
    console.log(`batch crash: ${creates.length} batches submitted for ${customIds.length} calls across 2 SIGKILLs; ${log.filter(isResults).length} results reads; ${processed.length} requests processed`);
  } finally {
    await w.kill();
  }
});
