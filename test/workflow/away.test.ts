/**
 * The away summary against the dev server and the offline model: below the threshold, or
 * with nothing that happened, it answers without a model call; otherwise a read-only fork
 * digests at most maxEvents events, newest first, running runs included.
 */
import { awaySummary, InvalidAwayRequestError, type AwaySummary } from '../../src/client';
import { eventLine } from '../../src/shared/dream/away';
import { hoursAgo, runSession, scopeIn, startSession, waitForVisible } from '../kit/dream';
import { startHarness, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'away' });
});
afterAll(() => h.close());
beforeEach(() => h.model.log.clear());

function expectKind<K extends AwaySummary['kind']>(s: AwaySummary, kind: K): Extract<AwaySummary, { kind: K }> {
  expect(s.kind).toBe(kind);
  return s as Extract<AwaySummary, { kind: K }>;
}

test('away for less than the threshold: nothing to summarise, no model call', async () => {
  const { scope } = scopeIn(h, 'away-short');
  await runSession(h, scope, `${scope}-s1`, 'Something happened.\n@reply done');
  await waitForVisible(h, `ForkMemoryScope = '${scope}'`, 1);
  h.model.log.clear();
  const summary = expectKind(await awaySummary(h.forkflow, { memoryScope: scope, since: hoursAgo(3) }), 'nothing_to_summarise');
  expect(summary).toMatchObject({ reason: 'below_threshold' });
  expect(summary.awayHours).toBeCloseTo(3, 1);
  expect(summary.message).toMatch(/less than the 4 h threshold/);
  // A lower threshold makes the same absence worth a digest.
  expect((await awaySummary(h.forkflow, { memoryScope: scope, since: hoursAgo(3), thresholdHours: 2, extraInstructions: '@reply Digest.' })).kind).toBe('summary');
  expect(messageRequests(h.model)).toHaveLength(1);
});

test('away long enough but nothing happened in the scope: nothing to summarise, no model call', async () => {
  const { scope } = scopeIn(h, 'away-quiet');
  const summary = expectKind(await awaySummary(h.forkflow, { memoryScope: scope, since: hoursAgo(30) }), 'nothing_to_summarise');
  expect(summary.reason).toBe('no_events');
  expect(h.model.log.entries()).toHaveLength(0);
});

test('the digest covers at most maxEvents events, newest first, a running run included', async () => {
  const { scope } = scopeIn(h, 'away-busy');
  for (let i = 1; i <= 5; i++) await runSession(h, scope, `${scope}-s${i}`, `Task ${i}.\n@reply finished task ${i}`);
  await runSession(h, `${scope}-other`, `${scope}-elsewhere`, 'Not this scope.\n@reply elsewhere');
  const running = await startSession(h, scope, `${scope}-live`, 'Long task.\n@sleep 60000 @reply never');
  await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Long task.'));
  await waitForVisible(h, `ForkMemoryScope = '${scope}'`, 6);
  h.model.log.clear();

  const summary = expectKind(
    await awaySummary(h.forkflow, { memoryScope: scope, since: hoursAgo(8), maxEvents: 4, extraInstructions: '@reply Digest: five tasks finished, one still running.' }),
    'summary',
  );
  expect(summary).toMatchObject({ totalEvents: 6, omittedEvents: 2, digest: 'Digest: five tasks finished, one still running.' });
  expect(summary.events.map((e) => e.agentId)).toEqual([`${scope}-live`, `${scope}-s5`, `${scope}-s4`, `${scope}-s3`]);
  expect(summary.events[0]).toMatchObject({ status: 'running' });
  expect(summary.events[1]).toMatchObject({ status: 'completed', text: 'finished task 5', turns: 1 });

  // The digest fork saw exactly those four events, and was read-only.
  const requests = messageRequests(h.model);
  expect(requests).toHaveLength(1);
  const prompt = JSON.stringify(bodyOf(requests[0]!));
  for (const e of summary.events) expect(prompt).toContain(JSON.stringify(eventLine(e)).slice(1, -1));
  expect(prompt).not.toContain(`${scope}-s2`);
  expect(prompt).not.toContain('elsewhere');
  expect(prompt).toContain('2 older ones are left out');
  const tools = (bodyOf(requests[0]!) as { tools?: { name: string }[] }).tools?.map((t) => t.name) ?? [];
  expect(tools).not.toContain('FileWrite');
  expect((await h.forkflow.status(summary.fork.agentId)).querySource).toBe('forkflow:away-summary');
  await running.cancel();
});

test('the request is validated: threshold at most 30 days, maxEvents at least 1', async () => {
  const { scope } = scopeIn(h, 'away-invalid');
  const err = await awaySummary(h.forkflow, { memoryScope: scope, since: hoursAgo(1), thresholdHours: 721, maxEvents: 0 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidAwayRequestError);
  expect((err as InvalidAwayRequestError).issues.join('\n')).toMatch(/thresholdHours[\s\S]*30 days[\s\S]*maxEvents/);
  expect((await awaySummary(h.forkflow, { memoryScope: scope, since: hoursAgo(1), thresholdHours: 720 })).kind).toBe('nothing_to_summarise');
});
