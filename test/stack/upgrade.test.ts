/**
 * A safe upgrade with Worker Versioning on the self-hosted stack. Build 1 serves the
 * deployment; short forks and a long-lived (idle-waiting) agent start on it. Build 2 has
 * changed workflow code (one more timer per turn: replayed on build 1's histories it would
 * be a nondeterminism error) and is made current. The short forks finish on build 1, pinned;
 * the long-lived agent moves to build 2 at its next continue-as-new; build 1 is retired once
 * nothing runs on it, and the agent goes on, on build 2 alone.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ROOT } from '../../scripts/stack/stack';
import type { ForkflowClient } from '../../src/client';
import { messagesQuery } from '../../src/shared/wire/messages';
import { startStackHarness, type StackHarness } from '../kit/stack';
import { waitFor } from '../kit/wait';

jest.setTimeout(900_000);

const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) };
const DEPLOYMENT = 'forkflow-upgrade-test';

let h: StackHarness;
let client: Client;
let forkflow: ForkflowClient;
const bundles: Record<'b1' | 'b2', string> = { b1: '', b2: '' };
let copy: string;

/** Build 2: this repository's workflow code with one more durable timer at the start of every turn. */
async function changedBundle(): Promise<string> {
  copy = join(ROOT, '.forkflow', `upgrade-build-${process.pid}`);
  rmSync(copy, { recursive: true, force: true });
  cpSync(join(ROOT, 'src'), join(copy, 'src'), { recursive: true });
  const turnLoop = join(copy, 'src', 'workflows', 'fork', 'turn-loop.ts');
  const source = readFileSync(turnLoop, 'utf8');
  const changed = source
    .replace('export async function runTurn(agent: ForkAgent): Promise<TurnOutcome> {', "export async function runTurn(agent: ForkAgent): Promise<TurnOutcome> {\n  await sleep('1ms');")
    .replace("import { ActivityFailure,", 'import { sleep, ActivityFailure,');
  if (changed === source || !changed.includes("await sleep('1ms')") || !changed.includes('import { sleep,')) throw new Error('turn-loop.ts no longer has the shape this test changes');
  writeFileSync(turnLoop, changed);
  const { code } = await bundleWorkflowCode({ workflowsPath: join(copy, 'src', 'workflows', 'index.ts'), workflowInterceptorModules: [join(copy, 'src', 'workflows', 'interceptors.ts')], logger: quiet });
  return code;
}

async function startBuild(buildId: 'b1' | 'b2'): Promise<void> {
  await h.withWorker({ bundleCode: bundles[buildId], deployment: { name: DEPLOYMENT, buildId }, identity: `build-${buildId}` });
}

/** Makes a build current once the server knows it (its worker has polled). */
async function makeCurrent(buildId: string): Promise<void> {
  await waitFor(
    async () => {
      try {
        await client.workflowService.setWorkerDeploymentCurrentVersion({ namespace: h.stack.namespace, deploymentName: DEPLOYMENT, buildId, identity: 'upgrade-test' });
        return true;
      } catch {
        return undefined;
      }
    },
    `build ${buildId} registered and made current`,
    60_000,
  );
}

/** The text of an agent's latest reply, from its transcript. */
async function lastReply(agentId: string): Promise<string | undefined> {
  const last = (await forkflow.transcript(agentId)).at(-1);
  if (last?.role !== 'assistant') return undefined;
  return typeof last.content === 'string' ? last.content : last.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** The build a run's workflow tasks are pinned to, from the server. */
async function buildOf(handle: WorkflowHandle): Promise<string | undefined> {
  const { raw } = await handle.describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return info?.deploymentVersion?.buildId ?? undefined;
}

/** The builds that completed the workflow tasks of a run, in order (from its history). */
async function buildsOf(handle: WorkflowHandle): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const done = e.workflowTaskCompletedEventAttributes;
    return done ? [done.deploymentVersion?.buildId ?? done.workerDeploymentVersion ?? '?'] : [];
  });
}

beforeAll(async () => {
  const [harness, b2] = await Promise.all([startStackHarness('upgrade'), changedBundle()]);
  h = harness;
  ({ client, forkflow } = h);
  bundles.b1 = readFileSync(h.bundlePath, 'utf8');
  bundles.b2 = b2;
});

afterAll(async () => {
  await h?.close();
  if (copy) rmSync(copy, { recursive: true, force: true });
});

test('build 2 made current: short forks finish pinned on build 1, the long-lived agent moves to build 2, build 1 retires', async () => {
  await startBuild('b1');
  await makeCurrent('b1');

  const short = Array.from({ length: 3 }, (_, i) => `short-${i}`);
  for (const id of short) await forkflow.start({ agentId: id, prompt: [`Upgrade fork ${id}.`, '@repeat 5 @sleep 400 @tool Read {"file_path":"notes.txt"}', `@reply ${id} done`].join('\n') });
  await forkflow.start({ agentId: 'long-lived', prompt: 'Stay around.\n@reply ready', idleTimeout: '30m' });
  const agent = client.workflow.getHandle('long-lived');
  await waitFor(async () => (await forkflow.status('long-lived')).state === 'idle' || undefined, 'the long-lived agent idle', 60_000);
  expect(await buildOf(agent)).toBe('b1');

  await startBuild('b2');
  await makeCurrent('b2');

  // Short forks: finished where they began, without a workflow task failing.
  const results = await Promise.all(short.map((id) => forkflow.result(id)));
  for (const [i, result] of results.entries()) expect(result).toMatchObject({ status: 'completed', text: `short-${i} done` });
  for (const id of short) {
    const handle = client.workflow.getHandle(id);
    expect(await buildOf(handle)).toBe('b1');
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
  }

  // The long-lived agent: its next wake (a message) finds build 2 current and continues as new onto it.
  expect(await forkflow.sendMessage('long-lived', { message: 'Once more.\n@reply again' })).toBe('queued');
  await waitFor(async () => (await buildOf(agent)) === 'b2' && (await forkflow.status('long-lived')).state === 'idle' ? true : undefined, 'the long-lived agent idle on build 2', 60_000);
  expect(await lastReply('long-lived')).toBe('again');
  // The current run was begun and served by build 2 only.
  expect(new Set(await buildsOf(client.workflow.getHandle('long-lived')))).toEqual(new Set(['b2']));

  // The run on build 2 holds the whole conversation itself: none of build 1's runs is read again.
  const page = await client.workflow.getHandle('long-lived').query(messagesQuery, { from: 0, to: 1_000, maxBytes: 1 << 20 });
  expect(page.prefix).toBeUndefined();
  expect(page.messages.length).toBe(page.total);

  // Nothing runs on build 1 any more: retire it, and the agent goes on with build 2 alone. Build
  // 2's worker is restarted too, so that nothing of the conversation is cached in a worker.
  await h.stopWorkers();
  await startBuild('b2');
  expect(await forkflow.sendMessage('long-lived', { message: 'And again.\n@reply third' })).toBe('queued');
  await waitFor(async () => ((await lastReply('long-lived')) === 'third' ? true : undefined), 'the long-lived agent answering on build 2 alone', 60_000);
  const events = (await agent.fetchHistory()).events ?? [];
  // Build 2's change is in the run: its extra timer, and no failed workflow task.
  expect(events.some((e) => e.timerStartedEventAttributes)).toBe(true);
  expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
});
