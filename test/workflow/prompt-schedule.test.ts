/**
 * Scheduled prompts (issue 32 item 7, seed 001 S1-83): a prompt Schedule fired now delivers
 * exactly one message to a waiting agent, which answers it; fired at a closed agent it
 * delivers nothing and its run says why; create, list, describe and delete, and bad input
 * refused before anything is created. Against the dev server and the offline model.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AgentNotFoundError, InvalidInputError, PromptScheduleExistsError, PromptScheduleNotFoundError } from '../../src/client';
import { textOf } from '../../src/shared/messages-api/anthropic';
import { FAILURE } from '../../src/shared/wire/failures';
import { startHarness, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';
import { rejectionOf, waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'prompt-schedule' });
});
afterAll(() => h.close());

/** Paused: it fires only when triggered, whatever the time of the run. */
const manual = { every: '24h', paused: true };

test('a triggered schedule delivers exactly one prompt, which the idle agent answers; a closed agent gets none', async () => {
  const agent = await h.forkflow.start({ agentId: 'sched-target', prompt: 'Wait for orders.\n@reply ready', idleTimeout: '10m' });
  await waitFor(async () => (await agent.status()).state === 'idle' || undefined, 'the agent to go idle');
  const schedules = h.forkflow.schedules;
  const created = await schedules.create('standup', 'sched-target', { message: '@reply standup posted', summary: 'daily standup' }, manual);
  expect(created).toMatchObject({ name: 'standup', scheduleId: 'forkflow-prompt-standup', agentId: 'sched-target', message: '@reply standup posted', paused: true, actionsTaken: 0 });
  expect(await rejectionOf(schedules.create('standup', 'sched-target', { message: 'again' }, manual))).toBeInstanceOf(PromptScheduleExistsError);

  await schedules.trigger('standup');
  const run = await waitFor(async () => (await schedules.describe('standup')).recent[0], 'the schedule to start a run');
  expect(await h.client.workflow.getHandle(run.workflowId, run.runId).result()).toEqual({ agentId: 'sched-target', delivered: true });
  await waitFor(async () => {
    const s = await agent.status();
    return (s.state === 'idle' && s.lastText === 'standup posted') || undefined;
  }, 'the agent to answer the scheduled prompt');
  // Exactly one message: one more model call, one user turn carrying it, from the schedule.
  const calls = messageRequests(h.model).filter((e) => textOf(bodyOf(e).messages[0] ?? { role: 'user', content: '' }).includes('Wait for orders.'));
  expect(calls).toHaveLength(2);
  const transcript = await h.forkflow.transcript('sched-target');
  const delivered = transcript.filter((m) => m.role === 'user' && textOf(m).includes('@reply standup posted'));
  expect(delivered).toHaveLength(1);
  expect(textOf(delivered[0]!)).toContain('[message from schedule:standup, summary: daily standup]');
  expect((await agent.status()).turns).toBe(2);

  const listed = await waitFor(async () => (await schedules.list({ agentId: 'sched-target' })).find((v) => v.name === 'standup'), 'the schedule to be listed');
  expect(listed.actionsTaken).toBe(1);

  // The agent ends; the next firing delivers nothing and its run fails saying why.
  await agent.cancel();
  await agent.result();
  await schedules.trigger('standup');
  const second = await waitFor(async () => (await schedules.describe('standup')).recent.find((r) => r.runId !== run.runId), 'a second run');
  const failed = await rejectionOf(h.client.workflow.getHandle(second.workflowId, second.runId).result());
  expect(failed).toBeInstanceOf(WorkflowFailedError);
  const cause = (failed as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(FAILURE.agentNotRunning);
  expect(cause!.message).toMatch(/sched-target is not running/);
  expect((await h.forkflow.transcript('sched-target')).filter((m) => textOf(m).includes('@reply standup posted'))).toHaveLength(1);

  await schedules.delete('standup');
  expect(await rejectionOf(schedules.describe('standup'))).toBeInstanceOf(PromptScheduleNotFoundError);
  expect(await rejectionOf(schedules.trigger('standup'))).toBeInstanceOf(PromptScheduleNotFoundError);
});

test('bad schedules are refused before anything is created', async () => {
  const schedules = h.forkflow.schedules;
  const bad = await rejectionOf(schedules.create('no spaces allowed', 'x', { message: '' }, { every: '1h', cron: ['* * * * *'] }));
  expect(bad).toBeInstanceOf(InvalidInputError);
  const issues = (bad as InvalidInputError).issues.join('\n');
  expect(issues).toMatch(/schedule name/);
  expect(issues).toMatch(/message must not be empty/);
  expect(issues).toMatch(/exactly one of every \(an interval\) or cron/);
  expect(await rejectionOf(schedules.create('ghost', 'no-such-agent', { message: 'hello' }, manual))).toBeInstanceOf(AgentNotFoundError);
  expect(await rejectionOf(schedules.describe('ghost'))).toBeInstanceOf(PromptScheduleNotFoundError);
});
