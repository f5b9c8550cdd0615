/**
 * Payload encryption end to end, on a dev stack of its own (`startDevStack`, as `forkflow dev`
 * runs it, with a database file to inspect): a fork whose prompt, file and tool result carry
 * marker strings leaves none of them in the server's database, nor does a fork that fails
 * with a marker in its failure message (which the client still reads); plain JSON from the `temporal`
 * CLI still starts and messages a fork (and, stored in plaintext, proves the scan reads
 * what the server wrote); the Web UI shows decoded text through the stack's codec server
 * and, on a server without one, does not.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { textOf, type MessageParam } from '../../src/shared/messages-api/anthropic';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { bundleForkflowWorkflows } from '../../src/worker/bundle';
import { startDevStack, type DevStack } from '../../src/testing/dev-stack';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { run, runTemporal } from '../kit/processes';
import { bigSnapshot } from '../kit/snapshots';
import { rejectionOf, waitFor } from '../kit/wait';

const root = join(__dirname, '..', '..');
const artifacts = join(root, 'test-artifacts');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const id = randomBytes(4).toString('hex');
const MARK = {
  prompt: `PROMPTMARK${id}`,
  file: `FILEMARK${id}`,
  toolResult: `TOOLMARK${id}`,
  reply: `REPLYMARK${id}`,
  message: `MSGMARK${id}`,
  failure: `FAILMARK${id}`,
};
/** The markers the encrypted fork's conversation carries (the failure marker is another fork's). */
const CONVERSATION = [MARK.prompt, MARK.file, MARK.toolResult, MARK.message, MARK.reply];
// Sent by the `temporal` CLI without encryption: it must be in the database (the scan's control).
const PLAIN = `PLAINMARK${id}`;

const dataConverter = forkflowDataConverter({ env: { ...process.env, FORKFLOW_ENCRYPTION_KEYS: `e2e-${id}:${randomBytes(32).toString('base64')}` } });
const dir = tempDir('encryption');
const dbFile = join(dir, 'temporal.db');
const workspace = join(dir, 'ws');
/** Workflows bundled for the encrypting converter: failures they raise are converted inside. */
const bundlePath = join(dir, 'workflow-bundle.js');
let stack: DevStack;

/** Every byte the dev server keeps for this database: the file and its write-ahead log. */
function databaseBytes(): string {
  return ['', '-wal', '-shm', '-journal']
    .map((suffix) => `${dbFile}${suffix}`)
    .filter(existsSync)
    .map((f) => readFileSync(f).toString('latin1'))
    .join('\n');
}

beforeAll(async () => {
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'notes.txt'), `Release notes: ${MARK.file}\n`);
  // The Glob result names this file; the marker reaches history only as a tool result.
  writeFileSync(join(workspace, `${MARK.toolResult}.log`), '');
  const quiet = () => undefined;
  writeFileSync(bundlePath, await bundleForkflowWorkflows({ log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet }, dataConverter));
  stack = await startDevStack({
    server: { dbFile, logLevel: 'error' },
    taskQueue: uniqueTaskQueue('encryption'),
    workspaceRoot: workspace,
    offlineModel: {},
    dataConverter,
    workflowBundle: { codePath: bundlePath },
    // The UI decodes for whoever loads it (`forkflow dev --codec-in-ui`): what this test looks at.
    codecInUi: true,
  });
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const lastReply = (messages: MessageParam[]) => {
  const last = messages.at(-1);
  return last?.role === 'assistant' ? textOf(last) : undefined;
};

const encryptedForkId = `enc-${id}`;

test('the dev stack encrypts: prompt, file content, tool result, reply and message reach the model but not the database', async () => {
  expect(stack.codecServer).toBeDefined();
  const fork = await stack.client.start({
    agentId: encryptedForkId,
    forkLabel: 'encrypted',
    idleTimeout: '5m',
    prompt: `Read the notes; ${MARK.prompt}\n@tool Read {"file_path":"${join(workspace, 'notes.txt')}"}\n@tool Glob {"pattern":"*.log"}\n@reply ${MARK.reply}`,
  });
  await waitFor(async () => (await fork.status()).state === 'idle', 'the fork to finish its turn');
  await fork.sendMessage({ message: `${MARK.message}\n@reply ok`, from: 'ops' });
  await waitFor(async () => lastReply(await stack.client.transcript(encryptedForkId)) === 'ok', 'the reply to the message');
  // The worker decrypted everything on its way to the model (the real content was used).
  const sent = stack.offlineModel!.log.entries().map((e) => e.rawBody).join('\n');
  for (const mark of [MARK.prompt, MARK.file, MARK.toolResult, MARK.message]) expect(sent).toContain(mark);
  const transcript = JSON.stringify(await stack.client.transcript(encryptedForkId));
  for (const mark of CONVERSATION) expect(transcript).toContain(mark);
});

test('a finished fork resumes from a message: the client reads its encrypted start input', async () => {
  const agentId = `enc-resume-${id}`;
  const first = await stack.client.start({ agentId, prompt: `${MARK.prompt}\n@reply first` }).then((f) => f.result());
  expect(first).toMatchObject({ status: 'completed', text: 'first' });
  expect(await stack.client.sendMessage(agentId, { message: '@reply second', from: 'ops' })).toBe('resumed');
  expect(await stack.client.result(agentId)).toMatchObject({ status: 'completed', text: 'second' });
  // The resumed run went on from the first one's conversation.
  expect((await stack.client.transcript(agentId)).filter((m) => m.role === 'assistant').map(textOf)).toEqual(['first', 'second']);
});

test("siblings of a recorded snapshot: the worker reads the snapshot from its encrypted history, not by query", async () => {
  const snapshot = bigSnapshot({ conversationBytes: 8_000, pendingToolUses: 2 });
  snapshot.system = `Snapshot system prompt ${MARK.prompt}-snapshot`;
  const before = { ...stack.conversations.stats };
  const forks = await stack.client.forkMany(snapshot, [0, 1].map((i) => ({ agentId: `enc-sibling-${id}-${i}`, prompt: `Sibling ${i}.\n@reply sibling ${i} done` })));
  expect(await Promise.all(forks.map((f) => f.result().then((r) => r.text)))).toEqual(['sibling 0 done', 'sibling 1 done']);
  // The prefix and the context, each read once from the snapshot's start event and decrypted.
  expect(stack.conversations.stats.snapshotReads - before.snapshotReads).toBe(2);
  expect(stack.conversations.stats.queries - before.queries).toBe(0);
  // What the model got is the snapshot's: its system prompt and its conversation, then the sibling's directive.
  const request = stack.offlineModel!.log.entries().find((e) => e.rawBody.includes('Sibling 1.'))!;
  expect(request.rawBody).toContain(`${MARK.prompt}-snapshot`);
  expect(request.rawBody).toContain(JSON.stringify((snapshot.messages[0]!.content as string).slice(0, 200)).slice(1, -1));
});

test('a fork that fails with a marker in its failure message: the client reads the message', async () => {
  // An input field forkflow does not know is named in the InvalidForkInput failure's message.
  const handle = await stack.client.temporal.workflow.start('forkWorkflow', { taskQueue: stack.taskQueue, workflowId: `enc-fail-${id}`, args: [{ prompt: 'x', [MARK.failure]: true }] });
  const err = await rejectionOf(handle.result());
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause?.message).toContain(MARK.failure);
  // Decoded from the encrypted attributes: what history holds in the message field is a stand-in.
  expect((cause as ApplicationFailure).failure?.encodedAttributes).toBeTruthy();
});

test('plain JSON from the temporal CLI starts and messages a fork while the worker encrypts', async () => {
  const wf = `plain-${id}`;
  const cli = (args: string[]) => runTemporal([...args, '--address', stack.server.address, '--namespace', stack.server.namespace]);
  const started = await cli(['workflow', 'start', '--type', 'forkWorkflow', '--task-queue', stack.taskQueue, '-w', wf, '--input', JSON.stringify({ prompt: `${PLAIN}\n@reply first`, idleTimeout: '5m' })]);
  expect(started.stderr).toBe('');
  await waitFor(async () => (await stack.client.status(wf)).state === 'idle', 'the CLI-started fork to go idle');
  const signalled = await cli(['workflow', 'signal', '-w', wf, '--name', 'sendMessage', '--input', JSON.stringify({ message: 'again\n@reply second', from: 'cli' })]);
  expect(signalled.stderr).toBe('');
  await waitFor(async () => lastReply(await stack.client.transcript(wf)) === 'second', 'the CLI signal to be answered');
  // The plain message reached the model as sent, and the fork answered it.
  const sent = stack.offlineModel!.log.entries().map((e) => e.rawBody).join('\n');
  expect(sent).toContain(PLAIN);
  expect(sent).toContain('[message from cli]\\nagain');
  const replies = (await stack.client.transcript(wf)).filter((m) => m.role === 'assistant').map(textOf);
  expect([replies[0], replies.at(-1)]).toEqual(['first', 'second']);
});

test("the server's database holds none of the markers (and does hold the CLI's plaintext input)", () => {
  const bytes = databaseBytes();
  expect(bytes).toContain(PLAIN);
  expect(bytes).toContain(encryptedForkId);
  const found = Object.entries(MARK).filter(([, mark]) => bytes.includes(mark)).map(([what]) => what);
  expect(found).toEqual([]);
});

describe('the Web UI', () => {
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  // An encrypting worker on the run's shared server, whose Web UI has no codec server.
  let plain: Harness;
  const plainForkId = `enc-ui-${id}`;

  beforeAll(async () => {
    const installed = await run('bash', [join(root, 'scripts', 'install-chromium.sh')], { timeoutMs: 14 * 60_000 });
    if (installed.status !== 0) throw new Error(`scripts/install-chromium.sh failed: ${installed.stderr}`);
    plain = await startHarness({ name: 'enc-ui', dataConverter, bundlePath });
    await plain.forkflow.fork({ agentId: plainForkId, prompt: `Read the notes; ${MARK.prompt}\n@reply ${MARK.reply}` }, { mode: 'sync' });
    profile = mkdtempSync(join(tmpdir(), 'forkflow-chromium-'));
    browser = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: { width: 1400, height: 1000 } });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(60_000);
    mkdirSync(artifacts, { recursive: true });
  }, 15 * 60_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await plain?.close();
  });

  async function shot<T>(name: string, checks: () => Promise<T>): Promise<T> {
    try {
      return await checks();
    } finally {
      await page.screenshot({ path: join(artifacts, `web-ui-${name}.png`), fullPage: true });
    }
  }

  /** Runs the `transcript` query from the Queries tab and returns what the UI shows once it has an answer. */
  async function transcriptShown(): Promise<string> {
    await page.getByRole('tab', { name: 'Queries' }).click();
    await page.getByRole('button').filter({ has: page.getByRole('textbox', { name: 'Query Type' }) }).click();
    await page.getByRole('option', { name: 'transcript', exact: true }).click();
    // One line: the result viewer draws only the lines in view, so a formatted transcript would be cut off.
    const formatting = page.getByRole('switch', { name: 'JSON Formatting' });
    await page.getByText('JSON Formatting', { exact: true }).click();
    await waitFor(async () => !(await formatting.isChecked()), 'JSON formatting to be off');
    await page.getByRole('button', { name: 'Run Query' }).click();
    const result = page.getByRole('textbox', { name: 'Query Result' });
    return waitFor(async () => (await result.innerText()).trim() || undefined, 'the query result on screen', 60_000);
  }

  test("with the dev stack's codec server: the input and the transcript query show the decoded text", async () => {
    await page.goto(`${stack.server.uiUrl}/namespaces/${stack.server.namespace}/workflows/${encryptedForkId}`);
    await shot('codec-input', () => page.getByText(MARK.prompt).first().waitFor({ state: 'visible' }));
    const transcript = await shot('codec-transcript', transcriptShown);
    for (const mark of CONVERSATION) expect(transcript).toContain(mark);
  });

  test('without a codec server: the same kind of fork shows only ciphertext in its input and result', async () => {
    await page.goto(`${plain.env.uiUrl}/namespaces/${plain.env.namespace}/workflows/${plainForkId}`);
    const shown = await shot('no-codec', async () => {
      // The input once rendered: one long base64 string, the encrypted payload's data.
      await page.getByText(/^"[A-Za-z0-9+/]{60,}/).first().waitFor({ state: 'visible' });
      return page.locator('main').innerText();
    });
    expect(shown).toContain(plainForkId);
    expect(shown).toMatch(/Result/);
    // Neither the directive (input) nor the final reply (result: the transcript's last message).
    expect(shown).not.toContain(MARK.prompt);
    expect(shown).not.toContain(MARK.reply);
    // (Its Queries tab cannot even list the queries: the SDK's metadata query answers encrypted.)
  });
});
