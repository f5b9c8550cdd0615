/**
 * A memory scope's Schedule as an operator drives it, through the `forkflow` CLI in its own
 * process: created with a cron spec, jitter and catch-up window; triggered, it starts a
 * consolidation that passes its gates; triggered again while that run holds the lock, the
 * Schedule skips (overlap SKIP: one running action); pause, unpause, status, away and delete.
 */
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DreamClient, type DreamScheduleView, type DreamStatus } from '../../src/client';
import { closedSessionsQuery, holdUntil, runSession, scopeIn, tool, waitForVisible } from '../kit/dream';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { runForkflow, type ProcessResult } from '../kit/processes';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'dream-schedule', workspaceRoot: realpathSync(tempDir('dream-schedule')) });
});
afterAll(() => h.close());

const cli = (...args: string[]): Promise<ProcessResult> => runForkflow(['--address', h.env.address, '--task-queue', h.taskQueue, ...args]);
function json<T>(r: ProcessResult): T {
  if (r.status !== 0) throw new Error(`forkflow exited ${r.status}: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout) as T;
}

test('a schedule created through the CLI runs a consolidation; a second trigger while it runs is skipped', async () => {
  const dirs = scopeIn(h, 'scheduled');
  const gate = join(h.workspaceRoot, `gate-${dirs.scope}`);
  const topic = join(dirs.memoryDir, 'release.md');
  const script = [tool('FileWrite', { file_path: topic, content: '# Release\n- Freeze on Thursdays.\n' }), holdUntil(gate), '@reply Scope: consolidated'].join('\n');
  await runSession(h, dirs.scope, `${dirs.scope}-s1`, 'We freeze releases on Thursdays.\n@reply noted');
  await waitForVisible(h, closedSessionsQuery(dirs.scope), 1);

  // Far from firing by itself (1 January), so every run here is a trigger.
  const created = json<DreamScheduleView>(
    await cli('--json', 'dream', 'schedule', 'create', '--scope', dirs.scope, '--memory-dir', dirs.memoryDir, '--min-sessions', '1', '--delivery', 'interactive', '--cron', '0 0 1 1 *', '--jitter', '1m', '--catchup-window', '5m', '--note', 'nightly', '--extra-instructions', script),
  );
  expect(created).toMatchObject({ scheduleId: `forkflow-dream-${dirs.scope}`, scope: dirs.scope, paused: false, overlap: 'SKIP', catchupWindowMs: 300_000, jitterMs: 60_000, actionsTaken: 0 });
  expect(created.calendars).toHaveLength(1);
  expect(created.config).toMatchObject({ memoryScope: dirs.scope, minSessions: 1 });

  expect((await cli('dream', 'schedule', 'trigger', '--scope', dirs.scope)).status).toBe(0);
  // Polling goes through the client (a CLI process per poll would be slow); the CLI's describe is checked below.
  const describe = () => new DreamClient(h.forkflow).schedules.describe(dirs.scope);
  await waitFor(async () => (await h.forkflow.status(`dream-${dirs.scope}`)).activity === 'tool Bash' || undefined, 'the scheduled consolidation to hold the lock', 60_000);
  const first = await describe();
  expect(first.running).toHaveLength(1);

  expect((await cli('dream', 'schedule', 'trigger', '--scope', dirs.scope)).status).toBe(0);
  const skipped = await waitFor(async () => {
    const d = await describe();
    return d.skippedOverlap >= 1 ? d : undefined;
  }, 'the second trigger to be skipped', 30_000);
  expect(skipped.running).toEqual(first.running);
  expect(skipped.actionsTaken).toBe(1);

  writeFileSync(gate, '');
  const outcome = await new DreamClient(h.forkflow).result(first.running[0]!.workflowId);
  expect(outcome).toMatchObject({ kind: 'completed', manual: false, sessionsReviewed: 1, memoriesChanged: 1 });
  expect(readFileSync(topic, 'utf8')).toContain('Thursdays');
  // The Schedule learns that its run closed asynchronously.
  await waitFor(async () => (await describe()).running.length === 0 || undefined, 'the schedule to see its run finished');
  const after = json<DreamScheduleView>(await cli('--json', 'dream', 'schedule', 'describe', '--scope', dirs.scope));
  expect(after.running).toEqual([]);
  expect(after.actionsTaken).toBe(1); // SKIP: the second trigger was dropped, not queued
  expect(after.recent.map((r) => r.workflowId)).toEqual([first.running[0]!.workflowId]);

  const status = json<DreamStatus>(await cli('--json', 'dream', 'status', '--scope', dirs.scope));
  expect(status.lock.held).toBe(false);
  expect(status.runs[0]).toMatchObject({ workflowId: first.running[0]!.workflowId, temporalStatus: 'COMPLETED', outcome: 'completed' });

  expect((await cli('dream', 'schedule', 'pause', '--scope', dirs.scope, '--note', 'maintenance')).status).toBe(0);
  expect(await describe()).toMatchObject({ paused: true, note: 'maintenance' });
  expect((await cli('dream', 'schedule', 'unpause', '--scope', dirs.scope)).status).toBe(0);
  expect((await describe()).paused).toBe(false);

  expect((await cli('dream', 'schedule', 'delete', '--scope', dirs.scope)).status).toBe(0);
  const gone = await cli('dream', 'schedule', 'describe', '--scope', dirs.scope);
  expect(gone.status).toBe(3);
  expect(gone.stderr).toContain('dream schedule create');
  expect(existsSync(join(dirs.stateDir, 'state.json'))).toBe(true);
});

test('CLI errors: interval and cron together, a pinned clock on a schedule, and a bad --since are usage errors', async () => {
  const dirs = scopeIn(h, 'bad-schedule');
  const both = await cli('dream', 'schedule', 'create', '--scope', dirs.scope, '--memory-dir', dirs.memoryDir, '--interval', '6h', '--cron', '0 3 * * *');
  expect(both.status).toBe(2);
  expect(both.stderr).toContain('exactly one of every (an interval) or cron');
  const config = join(h.workspaceRoot, `${dirs.scope}.json`);
  writeFileSync(config, JSON.stringify({ memoryDir: dirs.memoryDir, now: new Date().toISOString() }));
  const pinned = await cli('dream', 'schedule', 'create', '--scope', dirs.scope, '--config', config, '--interval', '6h');
  expect(pinned.status).toBe(2);
  expect(pinned.stderr).toContain('now: a scheduled run must use its own clock');
  const since = await cli('away', '--scope', dirs.scope, '--since', 'yesterday-ish');
  expect(since.status).toBe(2);
  expect(since.stderr).toContain('--since');
});

test('`forkflow away` and `dream run` from the CLI: nothing to summarise exits 0; a run prints its outcome', async () => {
  const dirs = scopeIn(h, 'cli-run');
  const away = await cli('away', '--scope', dirs.scope, '--since', '2h');
  expect(away.status).toBe(0);
  expect(away.stdout).toMatch(/less than the 4 h threshold: nothing to summarise/);

  const run = await cli('dream', 'run', '--scope', dirs.scope, '--memory-dir', dirs.memoryDir, '--min-sessions', '3');
  expect(run.status).toBe(0);
  expect(run.stdout).toContain(`${dirs.scope}: skipped (gate: sessions)`);
  const failed = await cli('--json', 'dream', 'run', '--scope', dirs.scope, '--memory-dir', dirs.memoryDir, '--manual', '--delivery', 'interactive', '--extra-instructions', '@fail 400 @reply never');
  expect(failed.status).toBe(4);
  expect(JSON.parse(failed.stdout)).toMatchObject({ kind: 'errored', rolledBack: true });
});
