/**
 * Interrupts and prompt Schedules as operators and other systems meet them: the real
 * `temporal` CLI sending the `interrupt` update, and `forkflow interrupt` / `forkflow
 * schedule …` with their output and exit codes.
 */
import { startHarness, type Harness } from '../kit/env';
import { boundClis, type ProcessResult } from '../kit/processes';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'interrupt-cli' });
});
afterAll(() => h.close());

const temporal = (...args: string[]): Promise<string> => boundClis(h.env, h.taskQueue).temporal(...args);
const cli = (...args: string[]): Promise<ProcessResult> => boundClis(h.env, h.taskQueue).cli(...args);

test('temporal workflow update execute --name interrupt stops a model call; forkflow interrupt then refuses, exit 1', async () => {
  await h.forkflow.start({ agentId: 'cli-int', prompt: 'Hang.\n@tool Glob {"pattern":"*"}\n@sleep 60000 @reply never' });
  const call = await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Hang.') && (e.body as { messages?: unknown[] } | undefined)?.messages?.length === 3);
  const out = await temporal('workflow', 'update', 'execute', '-w', 'cli-int', '--name', 'interrupt', '--input', JSON.stringify({ reason: 'from the temporal CLI' }), '-o', 'json');
  expect(out).toContain('model call');
  await h.model.log.waitFor((e) => e.seq === call.seq && e.outcome === 'aborted');
  expect(await h.forkflow.status('cli-int')).toMatchObject({ state: 'idle', interrupts: { count: 1, last: { reason: 'from the temporal CLI' } } });

  const refused = await cli('interrupt', 'cli-int', '--reason', 'again');
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(/^forkflow: .*nothing to interrupt/);
  const sent = await cli('send', 'cli-int', '@reply back to work');
  expect(sent.status).toBe(0);
  expect(await h.forkflow.result('cli-int')).toMatchObject({ status: 'completed', text: 'back to work' });
});

test('forkflow schedule create, list, trigger and delete a prompt schedule', async () => {
  await h.forkflow.start({ agentId: 'cli-sched', prompt: 'Wait.\n@reply waiting', idleTimeout: '10m' });
  await waitFor(async () => (await h.forkflow.status('cli-sched')).state === 'idle' || undefined, 'the agent to go idle');

  const created = await cli('--json', 'schedule', 'create', 'cli-sched', '@reply nightly done', '--name', 'nightly', '--cron', '0 3 * * *', '--paused', '--summary', 'nightly');
  expect(created.status).toBe(0);
  expect(JSON.parse(created.stdout)).toEqual([expect.objectContaining({ name: 'nightly', agentId: 'cli-sched', cron: ['0 3 * * *'], paused: true })]);
  const listed = await waitFor(async () => {
    const r = await cli('--json', 'schedule', 'list', '--agent', 'cli-sched');
    const views = JSON.parse(r.stdout) as { name: string }[];
    return views.some((v) => v.name === 'nightly') ? views : undefined;
  }, 'the schedule to be listed');
  expect(listed.map((v) => v.name)).toEqual(['nightly']);

  expect((await cli('schedule', 'trigger', 'nightly')).stdout).toBe('triggered schedule nightly\n');
  await waitFor(async () => (await h.forkflow.status('cli-sched')).lastText === 'nightly done' || undefined, 'the agent to answer the scheduled prompt');

  expect((await cli('schedule', 'delete', 'nightly')).status).toBe(0);
  const gone = await cli('schedule', 'describe', 'nightly');
  expect(gone.status).toBe(3);
  expect(gone.stderr).toMatch(/No prompt schedule "nightly"/);
  const bad = await cli('schedule', 'create', 'cli-sched', 'hi', '--name', 'both', '--cron', '0 3 * * *', '--interval', '1h');
  expect(bad.status).toBe(2);
  expect(bad.stderr).toMatch(/exactly one of every \(an interval\) or cron/);
  await h.forkflow.cancel('cli-sched');
});
