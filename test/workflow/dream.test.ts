/**
 * autoDreamWorkflow against the dev server and the offline model: each gate skipping with its
 * reason (times come from the state file and the config's `now`, never from sleeping), a
 * manual run doing the whole consolidation, the lock blocking a concurrent run and a stale
 * holder being taken over, rollback after failed, timed-out and orphaned attempts, and the
 * escape audit failing a run whose written file came to point outside; and memories extracted
 * from one session by a fork under the same filter.
 */
import { isHidden } from '../../src/client/rows';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { DreamClient, extractMemories, InvalidDreamConfigError, type DreamOutcome } from '../../src/client';
import type { DreamConfigInput } from '../../src/shared/dream/config';
import type { RequestLogEntry } from '../../src/offline';
import { estimateCostUsd } from '../../src/shared/providers/pricing';
import { bodyOf, messageRequests } from '../kit/requests';
import { closedSessionsQuery, dreamState, holdUntil, hoursAgo, runSession, scheduledActivities, scopeIn, setDreamState, tool, waitForVisible } from '../kit/dream';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';
import { waitFor } from '../kit/wait';

/**
 * These tests script the fork turn by turn, hold it and time it out: its calls go interactive
 * unless a test says otherwise (the `batch` default has a test of its own, at the end).
 */
class InteractiveDream extends DreamClient {
  override start(config: DreamConfigInput, opts?: Parameters<DreamClient['start']>[1]): ReturnType<DreamClient['start']> {
    return super.start({ delivery: 'interactive', ...config }, opts);
  }
}

let h: Harness;
let dream: DreamClient;
const seenCreates = new Set<number>();
beforeAll(async () => {
  h = await startHarness({ name: 'dream', workspaceRoot: realpathSync(tempDir('dream')), model: { batchProcessingMs: 60_000 }, batchPollMs: 20, batchWindowMs: 0 });
  dream = new InteractiveDream(h.forkflow);
  // A batch is processed as it is submitted: the emulated clock jumps past its processing time.
  h.model.log.on('update', (e: RequestLogEntry) => {
    if (e.method !== 'POST' || e.path !== '/v1/messages/batches' || e.outcome !== 'completed' || seenCreates.has(e.seq)) return;
    seenCreates.add(e.seq);
    h.model.clock.advance(60_000);
  });
});
afterAll(() => h.close());
beforeEach(() => h.model.log.clear());

function expectKind<K extends DreamOutcome['kind']>(o: DreamOutcome, kind: K): Extract<DreamOutcome, { kind: K }> {
  expect(o.kind).toBe(kind);
  return o as Extract<DreamOutcome, { kind: K }>;
}

/** The text of every model request of the dream fork of `scope`, in order. */
function dreamRequests(scope: string): string[] {
  return messageRequests(h.model)
    .map((e) => JSON.stringify(bodyOf(e)))
    .filter((text) => text.includes(`memory scope \\"${scope}\\"`));
}

test('the config is validated by the client and by the workflow (min hours, min sessions, fork timeout)', async () => {
  const dirs = scopeIn(h, 'invalid');
  const bad = { memoryScope: dirs.scope, memoryDir: dirs.memoryDir, minHours: 0.5, minSessions: 0, forkTimeout: '5s' };
  const err = await dream.start(bad).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidDreamConfigError);
  expect((err as InvalidDreamConfigError).issues.join('\n')).toMatch(/minHours[\s\S]*minSessions[\s\S]*forkTimeout/);

  // Started around the client (as `temporal workflow start` would): the workflow itself refuses it, once.
  const handle = await h.client.workflow.start('autoDreamWorkflow', { args: [{ ...bad, memoryDir: 'relative/dir' }], taskQueue: h.taskQueue, workflowId: `dream-invalid-${dirs.scope}` });
  const failure = await handle.result().then(() => undefined, (e: unknown) => e);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause.type).toBe('InvalidDreamConfig');
  expect(cause.nonRetryable).toBe(true);
  expect(cause.message).toMatch(/memoryDir must be an absolute path/);
});

test('disabled: skipped at the first gate, before any activity', async () => {
  const dirs = scopeIn(h, 'disabled');
  const started = await dream.start({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir, enabled: false, manual: true });
  const outcome = expectKind(await started.result(), 'skipped');
  expect(outcome).toMatchObject({ gate: 'disabled', scope: dirs.scope });
  expect(await scheduledActivities(h.client.workflow.getHandle(started.workflowId))).toEqual([]);
});

test('time: consolidated 2 h ago with minHours 24 → skipped, without scanning sessions', async () => {
  const dirs = scopeIn(h, 'time');
  await setDreamState(dirs, { lastConsolidatedAt: hoursAgo(2) });
  const started = await dream.start({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir });
  const outcome = expectKind(await started.result(), 'skipped');
  expect(outcome.gate).toBe('time');
  expect(outcome.hoursSinceLast).toBeGreaterThanOrEqual(2);
  expect(outcome.hoursSinceLast).toBeLessThan(2.5);
  expect(outcome.reason).toMatch(/due after 24 h/);
  expect(await scheduledActivities(h.client.workflow.getHandle(started.workflowId))).toEqual(['dreamLoadState']);
  expect((await dreamState(dirs)).lastScanAt).toBeNull();
});

describe('sessions and throttle', () => {
  const dirs = { scope: '', memoryDir: '', stateDir: '' };
  const config = () => ({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir });

  test('the session count is of closed agent runs of the scope, not of consolidation forks', async () => {
    Object.assign(dirs, scopeIn(h, 'sessions'));
    // A consolidation first: its fork is a closed run of the scope too, and must not count.
    expectKind(await dream.run({ ...config(), manual: true, extraInstructions: '@reply Nothing to consolidate.' }), 'completed');
    await setDreamState(dirs, { lastConsolidatedAt: hoursAgo(72) });
    await runSession(h, dirs.scope, `${dirs.scope}-s1`, 'The deploy target is eu-west-3 (marker-s1).\n@reply noted');
    await runSession(h, dirs.scope, `${dirs.scope}-s2`, 'Use pnpm, not npm (marker-s2).\n@reply noted');
    await runSession(h, `${dirs.scope}-other`, `${dirs.scope}-elsewhere`, 'Another scope.\n@reply noted');
    await waitForVisible(h, closedSessionsQuery(dirs.scope), 3); // two sessions and the consolidation fork

    const started = await dream.start({ ...config(), minSessions: 3 });
    const outcome = expectKind(await started.result(), 'skipped');
    expect(outcome).toMatchObject({ gate: 'sessions', sessions: 2 });
    expect(await scheduledActivities(h.client.workflow.getHandle(started.workflowId))).toEqual(['dreamLoadState', 'dreamRecordScan', 'dreamCountSessions']);
    expect((await dreamState(dirs)).lastScanAt).toBe(outcome.at);
    await recordHistory(h.client.workflow.getHandle(started.workflowId), 'auto-dream-skipped-sessions');
  });

  test('throttle: a second scan within scanThrottle is skipped', async () => {
    const outcome = expectKind(await dream.run({ ...config(), minSessions: 2 }), 'skipped');
    expect(outcome.gate).toBe('throttle');
    expect(Date.parse(outcome.nextScanAt!) - Date.parse((await dreamState(dirs)).lastScanAt!)).toBe(10 * 60_000);
  });

  test('past the throttle and with enough sessions, the fork reads the staged transcripts and writes memories', async () => {
    const now = new Date(Date.now() + 11 * 60_000).toISOString();
    const topic = join(dirs.memoryDir, 'project.md');
    const script = [
      tool('Grep', { pattern: 'marker-s', path: dirs.stateDir, output_mode: 'content' }),
      tool('FileWrite', { file_path: topic, content: '# Project\n- Deploy target: eu-west-3\n- Package manager: pnpm\n' }),
      tool('FileWrite', { file_path: join(dirs.memoryDir, 'MEMORY.md'), content: '- project.md: deploy target and tooling\n' }),
      '@reply Scope: consolidated two sessions',
    ].join('\n');
    const outcome = expectKind(await dream.run({ ...config(), minSessions: 2, now, extraInstructions: script }), 'completed');
    expect(outcome).toMatchObject({ sessionsReviewed: 2, memoriesChanged: 2, indexLines: 1, lastConsolidatedAt: now, rolledBack: false });
    expect(outcome.changes).toEqual({ created: ['MEMORY.md', 'project.md'], updated: [], removed: [] });
    // The Grep result the model got back: both sessions' staged transcripts, nothing from the other scope.
    const second = dreamRequests(dirs.scope)[1]!;
    expect(second).toContain('marker-s1');
    expect(second).toContain('marker-s2');
    expect(second).not.toContain('Another scope');
    expect(await dreamState(dirs)).toMatchObject({ lastConsolidatedAt: now, claim: null, lastOutcome: { kind: 'completed' } });
  });
});

test('manual: skips the time and session gates, runs the four phases, retires an emptied file, cleans up', async () => {
  const dirs = scopeIn(h, 'manual');
  mkdirSync(dirs.memoryDir, { recursive: true });
  writeFileSync(join(dirs.memoryDir, 'old-notes.md'), '# superseded\n');
  const last = hoursAgo(0.5);
  await setDreamState(dirs, { lastConsolidatedAt: last });
  await runSession(h, dirs.scope, `${dirs.scope}-s1`, 'The user prefers tabs over spaces.\n@reply noted');
  await waitForVisible(h, closedSessionsQuery(dirs.scope), 1);

  const workflowId = `dream-manual-${dirs.scope}`;
  const sessions = join(dirs.stateDir, 'runs', workflowId, 'sessions');
  const script = [
    tool('Read', { file_path: join(sessions, 'INDEX.md') }),
    tool('FileWrite', { file_path: join(dirs.memoryDir, 'preferences.md'), content: '# Preferences\n- Tabs over spaces.\n' }),
    tool('FileWrite', { file_path: join(dirs.memoryDir, 'old-notes.md'), content: '' }),
    tool('FileWrite', { file_path: join(dirs.memoryDir, 'MEMORY.md'), content: '- preferences.md: how the user likes code formatted\n' }),
    '@reply Scope: consolidated',
  ].join('\n');
  const outcome = expectKind(await dream.run({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir, manual: true, extraInstructions: script }, { workflowId }), 'completed');
  expect(outcome).toMatchObject({ manual: true, sessionsReviewed: 1, memoriesChanged: 3, indexLines: 1, fork: { status: 'completed', agentId: `dream-${dirs.scope}` } });
  expect(outcome.changes).toEqual({ created: ['MEMORY.md', 'preferences.md'], updated: [], removed: ['old-notes.md'] });
  expect(existsSync(join(dirs.memoryDir, 'old-notes.md'))).toBe(false);

  const [first, second] = dreamRequests(dirs.scope);
  for (const phase of ['Orient', 'Gather recent signal', 'Consolidate', 'Prune and index']) expect(first).toContain(phase);
  expect(first).toContain(sessions);
  expect(first).toContain(`since the last consolidation (${last})`);
  expect(second).toContain(`${dirs.scope}-s1`); // the staged index lists the session
  expect(second).toContain('The user prefers tabs over spaces.');

  expect(await dreamState(dirs)).toMatchObject({ lastConsolidatedAt: outcome.at, claim: null, lastOutcome: { kind: 'completed' } });
  expect(existsSync(join(dirs.stateDir, 'runs', workflowId))).toBe(false);
  await expect(h.forkflow.transcript(`dream-${dirs.scope}`)).rejects.toThrow(/skipTranscript/);
  // And hidden from listings, as a skipTranscript fork a client starts is (seed 000: invisible to `agent ps`).
  const fork = await h.client.workflow.getHandle(`dream-${dirs.scope}`).describe();
  expect(fork.memo).toEqual({ forkflowHidden: true });
  expect(isHidden(fork)).toBe(true);
  await recordHistory(h.client.workflow.getHandle(workflowId), 'auto-dream-manual');
});

test('lock: a concurrent run is blocked while the first holds the lock, and the first completes', async () => {
  const dirs = scopeIn(h, 'lock');
  const gate = join(h.workspaceRoot, `gate-${dirs.scope}`);
  const config = { memoryScope: dirs.scope, memoryDir: dirs.memoryDir, manual: true };
  const first = await dream.start({ ...config, extraInstructions: [holdUntil(gate), '@reply Scope: done'].join('\n') });
  await waitFor(async () => (await h.forkflow.status(`dream-${dirs.scope}`)).activity === 'tool Bash' || undefined, 'the first consolidation to hold the lock');
  const holderRun = (await h.client.workflow.getHandle(`dream-${dirs.scope}`).describe()).runId;

  const blocked = expectKind(await dream.run({ ...config, extraInstructions: '@reply never' }), 'lock_blocked');
  expect(blocked.holder).toMatchObject({ workflowId: `dream-${dirs.scope}`, runId: holderRun });
  expect(blocked.reason).toMatch(/holds the lock/);
  expect((await dreamState(dirs)).claim).toMatchObject({ by: { workflowId: first.workflowId }, lock: { runId: holderRun } });

  writeFileSync(gate, '');
  expectKind(await first.result(), 'completed');
  expect((await dreamState(dirs)).lastOutcome).toMatchObject({ kind: 'completed', by: { workflowId: first.workflowId } });
});

test('a stale lock holder (no worker has progressed it past its timeout) is terminated and taken over', async () => {
  const dirs = scopeIn(h, 'stale');
  const lockId = `dream-${dirs.scope}`;
  // The holder's task queue has no worker: as if the worker that ran it was gone for good.
  const holder = await h.client.workflow.start('forkWorkflow', { args: [{ prompt: 'orphan', overrides: { agentId: lockId } }], taskQueue: `nobody-${dirs.scope}`, workflowId: lockId });
  const config = { memoryScope: dirs.scope, memoryDir: dirs.memoryDir, manual: true, extraInstructions: '@reply Scope: consolidated' };

  // Young, it blocks.
  expectKind(await dream.run(config), 'lock_blocked');
  // Two hours later (fork timeout 15 m + grace 10 m long past), it is stale.
  const later = new Date(Date.now() + 2 * 3_600_000).toISOString();
  const taker = await dream.start({ ...config, now: later });
  const outcome = expectKind(await taker.result(), 'completed');
  expect(outcome.takeover).toMatchObject({ workflowId: lockId, runId: holder.firstExecutionRunId });
  expect(outcome.takeover!.reason).toMatch(/stale/);
  expect((await h.client.workflow.getHandle(lockId, holder.firstExecutionRunId).describe()).status.name).toBe('TERMINATED');
  await recordHistory(h.client.workflow.getHandle(taker.workflowId), 'auto-dream-stale-takeover');
});

describe('rollback', () => {
  test('a failed fork rolls "last consolidated" back, so the next run is due again', async () => {
    const dirs = scopeIn(h, 'rollback');
    const before = hoursAgo(72);
    await setDreamState(dirs, { lastConsolidatedAt: before });
    const started = await dream.start({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir, manual: true, extraInstructions: '@fail 400 @reply never' });
    const outcome = expectKind(await started.result(), 'errored');
    expect(outcome).toMatchObject({ rolledBack: true, lastConsolidatedAt: before, fork: { status: 'failed' } });
    expect(await dreamState(dirs)).toMatchObject({ lastConsolidatedAt: before, claim: null, lastOutcome: { kind: 'errored' } });
    expect(readdirSync(join(dirs.stateDir, 'runs'))).toEqual([]); // the staging folder went with the attempt
    // The time gate passes again (only the session gate stops it now).
    expect(expectKind(await dream.run({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir }), 'skipped').gate).toBe('sessions');
    await recordHistory(h.client.workflow.getHandle(started.workflowId), 'auto-dream-rollback');
  });

  test('a fork that reaches its timeout → timed_out, rolled back', async () => {
    const dirs = scopeIn(h, 'timeout');
    const outcome = expectKind(await dream.run({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir, manual: true, forkTimeout: '10s', extraInstructions: '@sleep 60000 @reply never' }), 'timed_out');
    expect(outcome).toMatchObject({ rolledBack: true, lastConsolidatedAt: null, fork: { status: 'timeout' } });
    expect(await dreamState(dirs)).toMatchObject({ lastConsolidatedAt: null, claim: null, lastOutcome: { kind: 'timed_out' } });
  });

  test('cancelling a run mid-consolidation stops the fork and rolls the time back', async () => {
    const dirs = scopeIn(h, 'cancel');
    const before = hoursAgo(72);
    await setDreamState(dirs, { lastConsolidatedAt: before });
    const never = join(h.workspaceRoot, `never-${dirs.scope}`);
    const started = await dream.start({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir, manual: true, extraInstructions: [holdUntil(never), '@reply never'].join('\n') });
    await waitFor(async () => (await h.forkflow.status(`dream-${dirs.scope}`)).activity === 'tool Bash' || undefined, 'the fork to be working');
    expect((await dreamState(dirs)).claim).toMatchObject({ previous: before });
    const handle = h.client.workflow.getHandle(started.workflowId);
    await handle.cancel();
    await expect(started.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(await dreamState(dirs)).toMatchObject({ lastConsolidatedAt: before, claim: null, lastOutcome: { kind: 'errored' } });
    expect((await h.forkflow.status(`dream-${dirs.scope}`)).state).toBe('killed');
  });

  test('a claim left by a dream that died is rolled back by the next run', async () => {
    const dirs = scopeIn(h, 'orphan');
    const before = hoursAgo(72);
    const ghost = { workflowId: `dream-ghost-${dirs.scope}`, runId: '8d5f1c5e-0b7e-4a57-9f7e-3c1a6b0f2d11' };
    await setDreamState(dirs, { lastConsolidatedAt: hoursAgo(0.1), claim: { by: ghost, lock: ghost, at: hoursAgo(0.1), previous: before, runKey: 'ghost' } });
    mkdirSync(join(dirs.stateDir, 'runs', 'ghost', 'sessions'), { recursive: true });
    const outcome = expectKind(await dream.run({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir }), 'skipped');
    expect(outcome.gate).toBe('sessions'); // not 'time': the dead run's claim no longer holds the time forward
    expect(await dreamState(dirs)).toMatchObject({ lastConsolidatedAt: before, claim: null });
    expect(existsSync(join(dirs.stateDir, 'runs', 'ghost'))).toBe(false);
  });
});

test('escape audit: a written memory file swapped for a link outside fails the run and rolls back', async () => {
  const dirs = scopeIn(h, 'escape');
  const outside = join(h.workspaceRoot, `outside-${dirs.scope}`);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'original');
  const gate = join(h.workspaceRoot, `gate-${dirs.scope}`);
  const topic = join(dirs.memoryDir, 'topic.md');
  const script = [tool('FileWrite', { file_path: topic, content: 'inside' }), holdUntil(gate), '@reply Scope: done'].join('\n');
  const started = await dream.start({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir, manual: true, extraInstructions: script });
  await waitFor(async () => (await h.forkflow.status(`dream-${dirs.scope}`)).activity === 'tool Bash' || undefined, 'the fork to have written and be waiting');
  rmSync(topic);
  symlinkSync(join(outside, 'secret.txt'), topic);
  writeFileSync(gate, '');

  const outcome = expectKind(await started.result(), 'escape_audit_failed');
  expect(outcome.escapes).toEqual([expect.objectContaining({ path: topic, reason: 'outside' })]);
  expect(outcome.error).toContain(topic);
  expect(outcome).toMatchObject({ rolledBack: true, lastConsolidatedAt: null, fork: { status: 'failed', stopReason: 'escape_audit_failed' } });
  expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('original');
  expect((await dreamState(dirs)).lastOutcome).toMatchObject({ kind: 'escape_audit_failed' });
  await recordHistory(h.client.workflow.getHandle(started.workflowId), 'auto-dream-escape-audit');
});

test('a state directory inside the memory directory is refused (the fork could rewrite it)', async () => {
  const dirs = scopeIn(h, 'inside');
  const err = await dream.run({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir, stateDir: join(dirs.memoryDir, '.state'), manual: true }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidDreamConfigError);
  expect((err as Error).message).toMatch(/inside memoryDir/);
});

test('by default the consolidation fork is batched: every model call of the dream goes through Message Batches, at half price', async () => {
  const dirs = scopeIn(h, 'batched');
  const script = [tool('FileWrite', { file_path: join(dirs.memoryDir, 'MEMORY.md'), content: '- nothing yet\n' }), '@reply Scope: consolidated'].join('\n');
  // The plain client: no delivery in the config.
  const before = h.model.batches.entries().length;
  const outcome = expectKind(await new DreamClient(h.forkflow).run({ memoryScope: dirs.scope, memoryDir: dirs.memoryDir, manual: true, extraInstructions: script }), 'completed');
  expect(outcome).toMatchObject({ memoriesChanged: 1, fork: { status: 'completed' } });
  const log = h.model.log.entries();
  const creates = log.filter((e) => e.method === 'POST' && e.path === '/v1/messages/batches');
  expect(creates).toHaveLength(2);
  expect(creates.every((e) => JSON.stringify(e.body).includes(`memory scope \\"${dirs.scope}\\"`))).toBe(true);
  expect(dreamRequests(dirs.scope)).toEqual([]);
  const fork = await h.forkflow.result(`dream-${dirs.scope}`);
  expect(fork.usage.batch).toMatchObject({ outputTokens: fork.usage.outputTokens, inputTokens: fork.usage.inputTokens });
  // The offline model's own accounting: what it billed per batch request, cache traffic included, is what the dream recorded.
  const processed = h.model.batches.entries().slice(before);
  expect(processed.map((p) => p.result)).toEqual(['succeeded', 'succeeded']);
  const billed = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  for (const p of processed) {
    billed.inputTokens += p.usage?.input_tokens ?? 0;
    billed.outputTokens += p.usage?.output_tokens ?? 0;
    billed.cacheReadInputTokens += p.usage?.cache_read_input_tokens ?? 0;
    billed.cacheCreationInputTokens += p.usage?.cache_creation_input_tokens ?? 0;
  }
  expect(fork.usage).toMatchObject(billed);
  expect(fork.usage.batch).toMatchObject(billed);
  expect(billed.cacheReadInputTokens).toBeGreaterThan(0);
  // At half the price of the same tokens asked interactively.
  const model = fork.model ?? 'claude-sonnet-4-6';
  const { batch: _batched, ...interactive } = fork.usage;
  expect(estimateCostUsd(model, fork.usage)).toBeCloseTo(estimateCostUsd(model, interactive) / 2, 5);
});

test("memories extracted from a session (S1-127): a fork of the finished agent writes its memory directory under the autoMem filter; a write elsewhere is refused; the agent is untouched", async () => {
  await h.forkflow.fork({ agentId: 'extract-session', prompt: 'Fix the deploy.\nFact: the deploy key lives in vault/deploy.\n@reply fixed' }, { mode: 'sync' });
  const memoryDir = join(h.workspaceRoot, 'memory', `extract-${Date.now()}`);
  mkdirSync(memoryDir, { recursive: true });
  const index = join(memoryDir, 'MEMORY.md');
  const outside = join(h.workspaceRoot, 'not-memory.md');
  const instructions = [
    tool('FileWrite', { file_path: index, content: '- deploy.md: where the deploy key lives\n' }),
    tool('FileWrite', { file_path: outside, content: 'escaped' }),
    '@reply MEMORY.md: created',
  ].join('\n');
  const extracted = await extractMemories(h.forkflow, 'extract-session', { memoryDir, instructions });
  expect(extracted).toMatchObject({ agentId: 'extract-session', status: 'completed', report: 'MEMORY.md: created', written: [index] });
  expect(readFileSync(index, 'utf8')).toBe('- deploy.md: where the deploy key lives\n');
  expect(existsSync(outside)).toBe(false);
  // It read the session it forked from (the fact is in its first request), and the session itself did not change.
  const first = messageRequests(h.model).find((e) => JSON.stringify(bodyOf(e)).includes('Extract memories from this session'))!;
  expect(JSON.stringify(bodyOf(first).messages[0])).toContain('Fact: the deploy key lives in vault/deploy.');
  expect(JSON.stringify(await h.forkflow.transcript('extract-session'))).not.toContain('Extract memories');
});
