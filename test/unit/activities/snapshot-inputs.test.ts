/**
 * What a worker takes for a snapshot when it reads one from history (src/activities/
 * snapshot-inputs.ts): only a run of the snapshot workflow whose input is a valid snapshot,
 * read once however many siblings ask at once; a run that is not one is remembered as such,
 * and a read that failed is tried again.
 */
import { SnapshotInputs, type ReadStartInput } from '../../../src/activities/snapshot-inputs';
import { WORKFLOW_TYPES } from '../../../src/shared/wire/constants';
import { bigSnapshot } from '../../kit/snapshots';

const run = (workflowId: string) => ({ workflowId, runId: `${workflowId}-run` });

function reader(inputs: Record<string, unknown>, fail = new Set<string>()) {
  const reads: string[] = [];
  const read: ReadStartInput = (r, workflowType) => {
    reads.push(r.workflowId);
    expect(workflowType).toBe(WORKFLOW_TYPES.snapshot);
    if (fail.has(r.workflowId)) return Promise.reject(new Error('unavailable'));
    return Promise.resolve(inputs[r.workflowId]);
  };
  return { read, reads };
}

test('siblings asking at once share one read of a valid snapshot', async () => {
  const snapshot = bigSnapshot({ conversationBytes: 2_000, pendingToolUses: 2 });
  const { read, reads } = reader({ snap: snapshot });
  const inputs = new SnapshotInputs(read);
  const got = await Promise.all([1, 2, 3].map(() => inputs.of(run('snap'))));
  expect(got).toEqual([snapshot, snapshot, snapshot]);
  expect(got[0]).toBe(snapshot);
  expect(reads).toEqual(['snap']);
});

test('another type of run, or a snapshot run with an input its workflow refused, is no snapshot, and is asked about once', async () => {
  const { read, reads } = reader({ agent: undefined, refused: { messages: 'not a list', model: 7 } });
  const inputs = new SnapshotInputs(read);
  for (let i = 0; i < 2; i++) {
    expect(await inputs.of(run('agent'))).toBeUndefined();
    expect(await inputs.of(run('refused'))).toBeUndefined();
  }
  expect(reads).toEqual(['agent', 'refused']);
});

test('a read that failed gives no snapshot now and is tried again', async () => {
  const snapshot = bigSnapshot({ conversationBytes: 1_000, pendingToolUses: 1 });
  const fail = new Set(['snap']);
  const { read, reads } = reader({ snap: snapshot }, fail);
  const inputs = new SnapshotInputs(read);
  expect(await inputs.of(run('snap'))).toBeUndefined();
  fail.clear();
  expect(await inputs.of(run('snap'))).toBe(snapshot);
  expect(reads).toEqual(['snap', 'snap']);
});
