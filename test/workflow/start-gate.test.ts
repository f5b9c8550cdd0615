/**
 * Child starts spread over workflow tasks (src/workflows/fork/start-gate.ts): a turn that
 * starts more agents than STARTS_MAX puts at most STARTS_MAX start commands in one workflow
 * task, and the rest in the next ones, as the first are started. Without the gate every start
 * went in one task completion, and past the server's 4 MB message limit (a thousand members in
 * bench:tree) the completion was refused and the root failed (GrpcMessageTooLarge).
 */
import { startHarness, type Harness } from '../kit/env';
import { START_GATE_PATCH, STARTS_MAX } from '../../src/workflows/fork/start-gate';

jest.setTimeout(300_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'start-gate' });
});
afterAll(() => h.close());

test(`a turn starting ${STARTS_MAX + 5} agents carries at most ${STARTS_MAX} starts a workflow task, and every agent runs`, async () => {
  const n = STARTS_MAX + 5;
  const calls = Array.from({ length: n }, (_, i) => ({ name: 'Agent', input: { description: `member ${i}`, name: `m${i}`, prompt: `Member ${i}.\n@reply done ${i}`, run_in_background: true } }));
  const rootId = 'start-gate-root';
  const root = await h.forkflow.startAgent({
    agentId: rootId,
    prompt: ['Start them all.', `@tools ${JSON.stringify(calls)}`, '@reply launched', `@repeat ${n + 5} @reply noted`].join('\n'),
    maxTurns: n + 10,
    maxOutputTokens: 2_000 + n * 120,
    subAgents: { forkGate: false, maxChildren: n, maxSpawns: n, maxTreeRunning: n + 1, maxTreeSpawns: n },
  });
  const result = await root.result();
  expect(result.status).toBe('completed');

  const events = (await h.client.workflow.getHandle(rootId).fetchHistory()).events ?? [];
  const marker = events.find((e) =>
    Object.values(e.markerRecordedEventAttributes?.details ?? {}).some((d) => (d.payloads ?? []).some((p) => Buffer.from(p.data ?? []).toString().includes(START_GATE_PATCH))),
  );
  expect(marker).toBeDefined();
  // Each start names the task that made it: no task carried more than STARTS_MAX.
  const perTask = new Map<string, number>();
  for (const e of events) {
    const started = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (!started) continue;
    const task = String(started.workflowTaskCompletedEventId);
    perTask.set(task, (perTask.get(task) ?? 0) + 1);
  }
  const counts = [...perTask.values()];
  expect(counts.reduce((a, b) => a + b, 0)).toBe(n);
  expect(Math.max(...counts)).toBe(STARTS_MAX);
  expect(counts.length).toBeGreaterThanOrEqual(2);
  // And every one of them ran to its end.
  const completed = events.filter((e) => e.childWorkflowExecutionCompletedEventAttributes).length;
  expect(completed).toBe(n);
});
