/**
 * `forkflow patches open-runs` against a real dev server: the open runs of forkflow's workflow
 * types started before a time (and without a patch's marker) are listed with exit 1, and none
 * with exit 0 — the check an operator runs before each patch retirement step
 * (docs/guides/patches.md).
 */
import { startHarness, type Harness } from '../kit/env';
import { boundClis, type ProcessResult } from '../kit/processes';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'patches-cli' });
});
afterAll(() => h.close());

const cli = (...args: string[]): Promise<ProcessResult> => boundClis(h.env, h.taskQueue).cli(...args);

interface Listed {
  query: string;
  open: number;
  runs: { workflowId: string; type: string; taskQueue: string; startTime: string; patches: string[] }[];
}

test('lists the open runs started before a time, exits 1 while any remain and 0 when none do', async () => {
  const before = new Date(Date.now() - 60_000).toISOString();
  // A root with sub-agents keeps the tree ledger, so its run records that patch's marker.
  await h.forkflow.start({ agentId: 'patch-open', prompt: 'Wait.\n@reply waiting', idleTimeout: '10m', subAgents: { forkGate: false } });
  await waitFor(async () => (await h.forkflow.status('patch-open')).state === 'idle' || undefined, 'the agent to go idle');
  const after = new Date(Date.now() + 60_000).toISOString();

  const open = await waitFor(async () => {
    const r = await cli('--json', 'patches', 'open-runs', '--started-before', after);
    const listed = JSON.parse(r.stdout) as Listed;
    return listed.runs.some((run) => run.workflowId === 'patch-open') ? { r, listed } : undefined;
  }, 'visibility to list the open run');
  expect(open.r.status).toBe(1);
  expect(open.listed.runs).toEqual([expect.objectContaining({ workflowId: 'patch-open', type: 'forkWorkflow', taskQueue: h.taskQueue })]);
  expect(open.listed.runs[0]!.patches).toContain('forkflow-tree-ledger-1');
  expect(open.listed.query).toContain('ExecutionStatus = "Running"');

  // Started after the time asked about: nothing could hold older code's history.
  const none = await cli('patches', 'open-runs', '--started-before', before);
  expect(none.status).toBe(0);
  expect(none.stdout).toMatch(/^no open run started before/);

  // A run that has recorded the patch cannot take its old branch; one that has not could.
  const recorded = await cli('--json', 'patches', 'open-runs', '--started-before', after, '--without', 'forkflow-tree-ledger-1');
  expect(recorded.status).toBe(0);
  expect((JSON.parse(recorded.stdout) as Listed).runs).toEqual([]);
  const missing = await cli('--json', 'patches', 'open-runs', '--started-before', after, '--without', 'forkflow-some-later-patch-1');
  expect(missing.status).toBe(1);
  expect((JSON.parse(missing.stdout) as Listed).runs.map((r) => r.workflowId)).toEqual(['patch-open']);

  // Another task queue's runs are not this deployment's.
  const elsewhere = await boundClis(h.env, `${h.taskQueue}-other`).cli('patches', 'open-runs', '--started-before', after);
  expect(elsewhere.status).toBe(0);

  // Closed runs hold no replay risk: once it ends, the check passes.
  await h.forkflow.cancel('patch-open');
  const closed = await waitFor(async () => {
    const r = await cli('patches', 'open-runs', '--started-before', after);
    return r.status === 0 ? r : undefined;
  }, 'visibility to see the run closed');
  expect(closed.stdout).toMatch(/the next retirement step is safe/);

  const bad = await cli('patches', 'open-runs', '--started-before', 'yesterday');
  expect(bad.status).toBe(2);
  expect(bad.stderr).toMatch(/startedBefore/);
});
