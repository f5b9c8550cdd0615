/**
 * Agents of any size, with external payload storage on (the test kit's converter, blobs in
 * the run's FORKFLOW_BLOB_DIR): a fork from an inline parent of 6 MB and one by reference
 * from it run; a 3 MB base64 image in a tool result reaches the model byte for byte; a fork
 * whose conversation grows to ~12 MB completes and its transcript reads the same through the
 * client and the CLI, also when its worker is SIGKILLed past 4 MB and a new one finishes it.
 * History holds references, never a payload over the threshold.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripCacheControl, textOf, type MessageParam, type ToolResultBlock } from '../../src/shared/messages-api/anthropic';
import { canonicalJson, utf8Length } from '../../src/shared/base/hash';
import { storageSettings } from '../../src/payloads/storage';
import { transcriptQuery } from '../../src/shared/wire/messages';
import { ForkflowClient } from '../../src/client';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { runForkflow, startWorkerProcess } from '../kit/processes';
import { largestPayload, rawHistory, referenceCount } from '../kit/raw-history';
import { bodyOf, messageRequests } from '../kit/requests';
import { bigSnapshot } from '../kit/snapshots';
import { pngOfBase64Size } from '../kit/media';

/** The SDK's default threshold: every payload at least this big goes to the blob store. */
const THRESHOLD = 256 * 1024;
/**
 * These agents are about payload sizes, not context windows: their conversations (megabytes)
 * pass any model's window, so the model takes any size here and they manage nothing.
 */
const NO_WINDOW = 1_000_000_000;
const budget = { maxTokens: 100_000_000 };
const off = { contextManagement: 'off' as const };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'large', model: { contextWindow: NO_WINDOW } });
});
afterAll(() => h.close());

const bytesOf = (messages: MessageParam[]) => utf8Length(canonicalJson(messages));

/** A message as the provider reads it: cache markers aside, a string is one text block. */
const asSent = (messages: MessageParam[]) =>
  messages.map((m) => ({ role: m.role, content: (typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content).map(stripCacheControl) }));

/** The tool_result block answering `id`, wherever it is in the request. */
function toolResult(messages: MessageParam[], id: string): ToolResultBlock | undefined {
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_result' && b.tool_use_id === id) return b;
  }
  return undefined;
}

async function expectSmallHistory(workflowId: string): Promise<number> {
  const history = await rawHistory(h.client, workflowId);
  expect(largestPayload(history)).toBeLessThan(THRESHOLD);
  return history.bytes;
}

test('a finished fork whose start input is in the blob store resumes from a message', async () => {
  const agentId = 'large-resume';
  // A prompt over the threshold: the start event holds a reference to it, not the prompt.
  const prompt = `${'x'.repeat(THRESHOLD + 10_000)}\n@reply first`;
  const first = await h.forkflow.start({ agentId, prompt, budget, ...off }).then((f) => f.result());
  expect(first).toMatchObject({ status: 'completed', text: 'first' });
  expect(referenceCount(await rawHistory(h.client, agentId))).toBeGreaterThan(0);
  expect(await h.forkflow.sendMessage(agentId, { message: '@reply second', from: 'ops' })).toBe('resumed');
  expect(await h.forkflow.result(agentId)).toMatchObject({ status: 'completed', text: 'second' });
  const transcript = await h.forkflow.transcript(agentId);
  expect(transcript.filter((m) => m.role === 'assistant').map(textOf)).toEqual(['first', 'second']);
});

test('storage is on in the kit, in a folder of the run', () => {
  const settings = storageSettings();
  expect(settings).toMatchObject({ kind: 'fs' });
  expect(settings.kind === 'fs' && settings.dir).toBe(process.env.FORKFLOW_BLOB_DIR);
});

test('a fork from an inline parent of 6 MB runs, and a fork by reference from that fork', async () => {
  const parent = bigSnapshot({ conversationBytes: 6_000_000, pendingToolUses: 1 });
  expect(bytesOf(parent.messages)).toBeGreaterThan(6_000_000);

  const inline = await h.forkflow.fork({ agentId: 'large-inline', parent, prompt: 'Inline part.\n@reply inline done', budget, ...off }, { mode: 'sync' });
  expect(inline).toMatchObject({ status: 'completed', text: 'inline done' });
  const first = messageRequests(h.model).find((e) => JSON.stringify(e.body ?? '').includes('Inline part.'))!;
  expect(asSent(bodyOf(first).messages.slice(0, parent.messages.length - 1))).toEqual(asSent(parent.messages.slice(0, -1)));
  const inlineHistory = await expectSmallHistory('large-inline');
  expect(referenceCount(await rawHistory(h.client, 'large-inline'))).toBeGreaterThan(0);

  const byRef = await h.forkflow.forkFrom('large-inline', { agentId: 'large-by-ref', prompt: 'By reference.\n@reply by-ref done', budget, ...off });
  expect(await byRef.result()).toMatchObject({ status: 'completed', text: 'by-ref done' });
  const refRequest = messageRequests(h.model).find((e) => JSON.stringify(e.body ?? '').includes('By reference.'))!;
  // The by-reference fork sent the inline fork's whole conversation, then its own directive.
  const inlineTranscript = await h.forkflow.transcript('large-inline');
  expect(asSent(bodyOf(refRequest).messages.slice(0, inlineTranscript.length))).toEqual(asSent(inlineTranscript));
  const refHistory = await expectSmallHistory('large-by-ref');
  console.log(`large: 6 MB inline parent → fork history ${inlineHistory} B; by-reference fork history ${refHistory} B`);
  expect(refHistory).toBeLessThan(64 * 1024);
});

test('a 3 MB base64 image in a tool result reaches the model byte for byte, on every turn', async () => {
  // A real PNG (noise pixels, stored uncompressed): the client checks a snapshot's images against the API's limits.
  const image = pngOfBase64Size(3_100_000).toString('base64');
  expect(image.length).toBeGreaterThan(3_000_000);
  const parent = bigSnapshot({ conversationBytes: 20_000, pendingToolUses: 1 });
  // The parent took a screenshot a turn ago: its tool result carries the image.
  const shot: MessageParam[] = [
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_shot', name: 'Read', input: { file_path: 'screen.png' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_shot', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: image } }] }] },
  ];
  parent.messages.splice(parent.messages.length - 2, 0, ...shot);

  const result = await h.forkflow.fork({ agentId: 'large-image', parent, prompt: 'Look at it.\n@tool Glob {"pattern":"*"}\n@reply seen', budget, ...off }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'seen' });
  const requests = messageRequests(h.model).filter((e) => JSON.stringify(e.body ?? '').includes('Look at it.'));
  // Two turns, two distinct requests. Under load an attempt may be retried (a 3 MB upload past
  // its heartbeat): a retry sends its turn's request again, the same bytes.
  expect(new Set(requests.map((r) => r.rawBody)).size).toBe(2);
  for (const r of requests) {
    expect(r.rawBody).toContain(`"data":"${image}"`);
    const content = toolResult(bodyOf(r).messages, 'toolu_shot')?.content;
    const block = Array.isArray(content) ? content[0] : undefined;
    expect(block?.type === 'image' && (block.source as { data?: string }).data === image).toBe(true);
  }
  await expectSmallHistory('large-image');
});

/** A fork that reads a ~2 MB file six times: its conversation grows to ~12 MB. */
const reads = 6;
const growPrompt = `Read it again and again.\n@repeat ${reads} @tool Read {"file_path":"huge.txt","offset":1,"limit":2000}\n@reply read ${reads} times`;
/** The uninterrupted run's transcript, the yardstick of the crashed one. */
let reference: MessageParam[] | undefined;

const cliTranscript = (agentId: string, taskQueue = h.taskQueue) => runForkflow(['--address', h.env.address, '--task-queue', taskQueue, '--json', 'transcript', agentId]);

test('a fork whose conversation grows to ~12 MB completes; client and CLI transcripts are identical', async () => {
  // 2,000 lines of ~1,000 characters: one Read of it is ~2 MB.
  const line = 'forkflow keeps long conversations out of history and reads them a page at a time. '.repeat(13);
  writeFileSync(join(h.workspaceRoot, 'huge.txt'), Array.from({ length: 2000 }, (_, i) => `${i} ${line}`).join('\n'));
  const prompt = growPrompt;
  const result = await h.forkflow.fork({ agentId: 'large-grow', prompt, maxTurns: 20, budget, ...off }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: `read ${reads} times` });

  const transcript = await h.forkflow.transcript('large-grow');
  expect(transcript).toHaveLength(2 + 2 * reads);
  reference = transcript;
  expect(bytesOf(transcript)).toBeGreaterThan(12_000_000);
  // What the model was sent last is the transcript up to its last reply.
  const last = messageRequests(h.model).filter((e) => JSON.stringify(e.body ?? '').includes('Read it again and again.')).pop()!;
  expect(asSent(bodyOf(last).messages)).toEqual(asSent(transcript.slice(0, -1)));

  const t0 = Date.now();
  const cli = await cliTranscript('large-grow');
  console.log(`large: the CLI read the transcript in ${Date.now() - t0} ms`);
  expect(cli.stderr).toBe('');
  expect(cli.status).toBe(0);
  expect(cli.stdout).toBe(`${JSON.stringify(transcript, null, 2)}\n`);

  // The whole-transcript query refuses (over 1 MiB) and names the paged one.
  await expect(h.client.workflow.getHandle('large-grow').query(transcriptQuery)).rejects.toThrow(/transcriptPage/);
  const history = await rawHistory(h.client, 'large-grow');
  expect(largestPayload(history)).toBeLessThan(THRESHOLD);
  console.log(`large: ${bytesOf(transcript)} B conversation → ${history.bytes} B history, ${referenceCount(history)} references`);
});

test('the same fork, its worker SIGKILLed once the conversation is past 4 MB: a new worker finishes it, transcripts identical to the uninterrupted run', async () => {
  expect(reference).toBeDefined();
  const taskQueue = uniqueTaskQueue('large-crash');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const opts = { address: h.env.address, taskQueue, modelUrl: h.model.url, workspace: h.workspaceRoot, bundlePath: h.env.bundlePath, extraEnv: { FORKFLOW_RESPONSE_DIR: tempDir('responses') } };
  let worker = await startWorkerProcess(opts);
  try {
    const before = Math.max(0, ...h.model.log.entries().map((e) => e.seq));
    const handle = await forkflow.start({ agentId: 'large-crash', prompt: growPrompt, maxTurns: 20, budget, ...off });
    // The model is asked with a conversation past 4 MB (its third turn): kill the worker then.
    const past4MB = await h.model.log.waitFor((e) => e.seq > before && e.rawBody.length > 4_000_000, { timeoutMs: 60_000 });
    await worker.kill('SIGKILL');
    worker = await startWorkerProcess(opts);
    expect(await handle.result()).toMatchObject({ status: 'completed', text: `read ${reads} times` });
    expect(past4MB.rawBody.length).toBeGreaterThan(4_000_000);
    const transcript = await forkflow.transcript('large-crash');
    expect(transcript).toEqual(reference);
    const t0 = Date.now();
    const cli = await cliTranscript('large-crash', taskQueue);
    console.log(`large: the CLI read the crashed run's transcript in ${Date.now() - t0} ms`);
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(0);
    expect(cli.stdout).toBe(`${JSON.stringify(reference, null, 2)}\n`);
  } finally {
    await worker.kill();
  }
});
