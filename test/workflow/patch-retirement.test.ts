/**
 * The patch retirement steps of docs/guides/patches.md, proved on forkflow's own workflow code
 * and committed histories (test/kit/patch-probe.ts builds bundles with one patch in a later step):
 *
 * 1. `patched(id)`: a history recorded before the patch takes the old branch, one recorded
 *    after it the new one; both replay.
 * 2. `deprecatePatch(id)` with the old branch deleted: histories carrying the marker replay; one
 *    recorded before the patch does not — so this step waits until no run without the marker is open.
 * 3. No call at all: a history with a deprecated marker (recorded by step-2 code) replays; one
 *    with a plain marker (recorded by step-1 code) does not — so removal waits until every run
 *    recorded under `patched()` has closed.
 *
 * Worked example for 1–2: `wake-delivers-message-first` (its fixtures are named for it). For 3:
 * `forkflow-continue-at-any-boundary`, in step 2 in the shipped code since its old branch no
 * history takes: a run recorded now carries its deprecated marker.
 */
import { HISTORY_FIXTURES } from '../kit/histories';
import { startHarness, type Harness } from '../kit/env';
import { bundleProbe, patchMarkers, readHistories, replayWithProbe } from '../kit/patch-probe';
import { script, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

const WAKE = 'wake-delivers-message-first';
const BOUNDARY = 'forkflow-continue-at-any-boundary';
const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const fixtures = readHistories(HISTORY_FIXTURES);
const fixture = (name: string) => {
  const found = fixtures.find((f) => f.name === name);
  if (!found) throw new Error(`no fixture ${name}`);
  return found;
};
const before = fixture('v2-local-read-tools/wake-by-message-before-patch');
const after = fixture('v2-local-read-tools/wake-by-message');

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'patch-retirement' });
});
afterAll(() => h.close());

test('step 1, patched(): the history from before the patch takes the old branch, the one after it the new; both replay', async () => {
  expect(patchMarkers(before.history).has(WAKE)).toBe(false);
  expect(patchMarkers(after.history).get(WAKE)).toEqual({ deprecated: false });
  const { calls, outcomes } = await replayWithProbe(await bundleProbe({}, quiet), [before, after]);
  expect(outcomes).toEqual([{ history: before.name }, { history: after.name }]);
  const answers = (h: string) => [...new Set(calls.filter((c) => c.patchId === WAKE && c.history === h).map((c) => c.answer))];
  expect(answers(before.name)).toEqual([false]);
  expect(answers(after.name)).toEqual([true]);
}, 300_000);

test('step 2, deprecatePatch() without the old branch: histories with the marker replay, one from before the patch does not', async () => {
  const { outcomes } = await replayWithProbe(await bundleProbe({ [WAKE]: 'deprecated' }, quiet), [before, after]);
  expect(outcomes.find((o) => o.history === after.name)).toEqual({ history: after.name });
  expect(outcomes.find((o) => o.history === before.name)?.error).toMatch(/nondetermin/i);
}, 300_000);

test('step 3, no call: a history recorded under deprecatePatch() replays, one recorded under patched() does not', async () => {
  // A run recorded now: one turn per run, so its first run continues as new at a turn boundary,
  // where the shipped code calls deprecatePatch(BOUNDARY).
  const id = 'patch-step3';
  const agent = await h.forkflow.startAgent({ agentId: id, prompt: script('Two turns.', toolStep('Glob', { pattern: '*' }), '@reply two done'), continueAsNew: { turnsPerRun: 1 } });
  expect(await agent.result()).toMatchObject({ status: 'completed', text: 'two done' });
  const firstRun = await waitFor(async () => {
    for await (const info of h.client.workflow.list({ query: `WorkflowId = "${id}" AND ExecutionStatus = "ContinuedAsNew"` })) return info.runId;
    return undefined;
  }, 'visibility to list the continued run');
  const recorded = { name: 'recorded-under-deprecate', history: await h.client.workflow.getHandle(id, firstRun).fetchHistory() };
  expect(patchMarkers(recorded.history).get(BOUNDARY)).toEqual({ deprecated: true });

  const old = fixture('v3-tree-ledger/continue-as-new-children-first-run');
  expect(patchMarkers(old.history).get(BOUNDARY)).toEqual({ deprecated: false });
  const { outcomes } = await replayWithProbe(await bundleProbe({ [BOUNDARY]: 'removed' }, quiet), [recorded, old]);
  expect(outcomes.find((o) => o.history === recorded.name)).toEqual({ history: recorded.name });
  expect(outcomes.find((o) => o.history === old.name)?.error).toMatch(/nondetermin/i);
}, 300_000);
