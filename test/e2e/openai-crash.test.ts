/**
 * An OpenAI-compatible provider under the crash promises (issue 43), end to end: worker
 * processes that are SIGKILLed, the model gateway in a process of its own, the offline model's
 * Chat Completions and Batch API wires as the provider.
 *
 * - Mid-call: the worker dies while a Chat Completions call is in flight; the gateway finishes
 *   it, and the retry on the next worker gets it replayed. The model's log shows every request
 *   served once.
 * - Batched: a tree whose child runs on the OpenAI-compatible provider with delivery `batch`;
 *   the worker dies between the child's batch submit and its result. The new worker polls the
 *   batch already submitted: every custom_id submitted once, processed once, nothing asked
 *   interactively, the child's usage what the provider billed, all of it in the batch part, and
 *   its cost at the batch price (half the configured price).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestLogEntry } from '../../src/offline';
import { catalogueOf } from '../../src/shared/providers/agent-provider';
import { estimateCostUsd } from '../../src/shared/providers/pricing';
import { providersConfigSchema } from '../../src/shared/providers/providers';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { startGatewayProcess, startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { agentStep, script, toolStep } from '../kit/tree';

const PROCESSING_MS = 5 * 60_000;
const MODEL = 'gpt-4.1-mini';
const PRICE = { input: 0.4, output: 1.6, cacheRead: 0.1 };

let h: Harness;
/** Advance the emulated clock past processing when a batch is created (off while a batch must stay in progress). */
let jumpOnCreate = true;
const seen = new Set<number>();

const isChatCreate = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/batches';
const isAnyCreate = (e: RequestLogEntry) => isChatCreate(e) || (e.method === 'POST' && e.path === '/v1/messages/batches');
const isChatRetrieve = (e: RequestLogEntry) => e.method === 'GET' && /^\/v1\/batches\/[^/?]+$/.test(e.path);
const isChatCall = (e: RequestLogEntry) => e.method === 'POST' && e.path === '/v1/chat/completions';

const config = () => [
  { name: 'anthropic', kind: 'anthropic', models: ['claude-sonnet-4-6'] },
  { name: 'openai', kind: 'openai-compatible', baseURL: `${h.model.url}/v1`, apiKeyEnv: 'OFFLINE_OPENAI_KEY', models: [MODEL], pricing: { [MODEL]: PRICE } },
];
const providersEnv = () => ({ FORKFLOW_PROVIDERS: JSON.stringify(config()), OFFLINE_OPENAI_KEY: 'offline-openai' });

beforeAll(async () => {
  h = await startHarness({ name: 'openai-crash', noWorker: true, model: { batchProcessingMs: PROCESSING_MS } });
  writeFileSync(join(h.workspaceRoot, 'notes.md'), 'the notes\n');
  h.model.log.on('update', (e: RequestLogEntry) => {
    if (!isAnyCreate(e) || e.outcome !== 'completed' || seen.has(e.seq)) return;
    seen.add(e.seq);
    if (jumpOnCreate || !isChatCreate(e)) h.model.clock.advance(PROCESSING_MS);
  });
});
afterAll(() => h?.close());

function worker(extraEnv: Record<string, string>): Promise<WorkerProcess> {
  return startWorkerProcess({ address: h.env.address, taskQueue: h.taskQueue, modelUrl: h.model.url, workspace: h.workspaceRoot, bundlePath: h.env.bundlePath, extraEnv: { ...providersEnv(), ...extraEnv } });
}

/** The same Chat Completions body asked more than once (by its bytes), among completed calls. */
function askedTwice(entries: RequestLogEntry[]): number[] {
  const first = new Map<string, number>();
  const twice: number[] = [];
  for (const e of entries.filter((x) => isChatCall(x) && x.outcome === 'completed')) {
    const digest = createHash('sha256').update(e.rawBody).digest('hex');
    if (first.has(digest)) twice.push(e.seq);
    else first.set(digest, e.seq);
  }
  return twice;
}

test('SIGKILLed while a Chat Completions call is in flight: the gateway finishes it, the retry gets it replayed, every request served once', async () => {
  const gateway = await startGatewayProcess(h.model.url, tempDir('oa-gateway'), providersEnv());
  const env = { FORKFLOW_RESPONSE_DIR: tempDir('oa-responses'), FORKFLOW_MODEL_GATEWAY: gateway.url };
  let w = await worker(env);
  try {
    h.model.log.clear();
    const prompt = script('Read the notes.', toolStep('Glob', { pattern: '*' }), toolStep('Read', { file_path: 'notes.md' }, '@sleep 4000 '), '@reply read them');
    const handle = await h.forkflow.start({ agentId: 'oa-midcall', prompt, provider: 'openai', model: MODEL });
    // The second call holds the model for 4 s: the worker dies while it is in flight.
    const first = await h.model.log.waitFor((e) => isChatCall(e) && e.outcome === 'completed', { timeoutMs: 60_000 });
    const inFlight = await h.model.log.waitFor((e) => isChatCall(e) && e.outcome === 'pending' && e.seq > first.seq, { timeoutMs: 60_000 });
    await w.kill('SIGKILL');
    w = await worker(env);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'read them', toolUses: 2 });
    await w.kill();
    const counts = await gateway.stop();
    const log = h.model.log.entries();
    // Three turns, three requests at the provider, each answered once and to its end.
    expect(log.filter(isChatCall).map((e) => e.outcome)).toEqual(['completed', 'completed', 'completed']);
    expect(log.find((e) => e.seq === inFlight.seq)?.outcome).toBe('completed');
    expect(askedTwice(log)).toEqual([]);
    // The gateway kept the call its worker lost and handed it to the retry. One lost call may
    // count twice here (measured: finished for nobody once its first client was gone, and
    // attached when the retry joined it before it ended): these count the gateway's events,
    // not calls; what the provider served (above) is the exact figure.
    expect(counts.finishedForNobody + counts.attached).toBeGreaterThanOrEqual(1);
    expect(counts.replayed).toBeGreaterThanOrEqual(1);
    console.log(`openai mid-call crash: gateway ${JSON.stringify(counts)}`);
  } finally {
    await w.kill();
    await gateway.stop().catch(() => undefined);
  }
});

test('a batched child on an OpenAI-compatible provider SIGKILLed between submit and result: submitted once, billed once, at the batch price', async () => {
  const env = { FORKFLOW_RESPONSE_DIR: tempDir('oa-batch-responses'), FORKFLOW_BATCH_POLL_MS: '50', FORKFLOW_BATCH_WINDOW_MS: '50' };
  let w = await worker(env);
  try {
    const child = script('Survey the notes.', toolStep('Glob', { pattern: '*' }), toolStep('Read', { file_path: 'notes.md' }), '@reply surveyed');
    const root = script('Delegate.', agentStep({ description: 'survey', prompt: child, provider: 'openai', model: MODEL }), '@reply delegated');
    const catalogue = catalogueOf(providersConfigSchema.parse(config()));
    const start = (agentId: string) => h.forkflow.startAgent({ agentId, prompt: root, model: 'claude-sonnet-4-6', delivery: 'batch', subAgents: { forkGate: false, providers: catalogue } });
    // The reference: the same tree, batched, uninterrupted.
    const reference = await (await start('oab-reference')).result();
    expect(reference).toMatchObject({ status: 'completed', text: 'delegated' });
    const referenceTranscript = await h.forkflow.transcript('oab-reference.spawn-1');

    h.model.log.clear();
    const processedBefore = h.model.batches.entries().length;
    jumpOnCreate = false;
    const handle = await start('oab-crash');
    // The child's first batch is submitted and polled, and stays in progress: the worker dies.
    await h.model.log.waitFor((e) => isChatCreate(e) && e.outcome === 'completed', { timeoutMs: 120_000 });
    const batchId = h.model.batches.chatIds().slice(-1)[0]!;
    await h.model.log.waitFor((e) => isChatRetrieve(e) && e.path.endsWith(batchId), { timeoutMs: 60_000 });
    await w.kill('SIGKILL');
    const killedAt = Math.max(...h.model.log.entries().map((e) => e.seq));
    w = await worker(env);
    // The new worker's retry polls the batch already submitted; then the provider finishes it.
    await h.model.log.waitFor((e) => e.seq > killedAt && isChatRetrieve(e) && e.path.endsWith(batchId), { timeoutMs: 120_000 });
    jumpOnCreate = true;
    h.model.clock.advance(PROCESSING_MS);

    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'delegated' });
    const childId = 'oab-crash.spawn-1';
    expect(await h.forkflow.transcript(childId)).toEqual(referenceTranscript);

    // The provider's log: the child's three requests each submitted once, in uploads of purpose batch; nothing asked interactively.
    const log = h.model.log.entries();
    const uploads = log.filter((e) => e.method === 'POST' && e.path === '/v1/files');
    const customIds = uploads.flatMap((e) => e.rawBody.split(/\r?\n/).filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { custom_id: string }).custom_id));
    expect(customIds).toHaveLength(3);
    expect(new Set(customIds).size).toBe(3);
    expect(log.filter(isChatCreate)).toHaveLength(3);
    expect(log.filter(isChatCall)).toHaveLength(0);
    expect(log.filter((e) => e.method === 'POST' && e.path === '/v1/messages')).toHaveLength(0);
    // Processed once; the child's usage is what the provider billed for them, all of it batched.
    const processed = h.model.batches.entries().slice(processedBefore).filter((p) => customIds.includes(p.customId));
    expect(processed.map((p) => p.result)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const billed = { input: 0, output: 0, cacheRead: 0 };
    for (const p of processed) {
      // The Chat Completions wire: prompt tokens less cached ones are input, cached ones reads, no writes.
      billed.input += p.usage!.input_tokens + p.usage!.cache_creation_input_tokens;
      billed.output += p.usage!.output_tokens;
      billed.cacheRead += p.usage!.cache_read_input_tokens;
    }
    const node = result.ledger!.nodes[childId]!;
    expect({ input: node.usage.inputTokens, output: node.usage.outputTokens, cacheRead: node.usage.cacheReadInputTokens }).toEqual(billed);
    expect(node.usage.batch).toMatchObject({ inputTokens: billed.input, outputTokens: billed.output, cacheReadInputTokens: billed.cacheRead });
    // At the batch price: half of what the configured price makes of the same usage.
    const { batch: _batched, ...interactive } = node.usage;
    const list = estimateCostUsd(MODEL, interactive, PRICE);
    expect(list).toBeGreaterThan(0);
    // (The ledger rounds each call's cost to a millionth of a dollar: three calls, a few millionths at most.)
    expect(node.costUsd).toBeCloseTo(estimateCostUsd(MODEL, node.usage, PRICE), 5);
    expect(node.costUsd).toBeCloseTo(list / 2, 5);
    console.log(`openai batch crash: ${uploads.length} uploads and ${log.filter(isChatCreate).length} batches for ${customIds.length} calls across a SIGKILL; child cost ${node.costUsd} USD (list ${list})`);
  } finally {
    await w.kill();
  }
});
