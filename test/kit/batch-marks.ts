/**
 * The part of a response store a batched call uses (its batch marks), in memory, for tests of
 * the batch desk without a worker's files. `lose` drops marks that carry a batch id: a worker
 * that died before writing it.
 */
import type { BatchMark, CallKey, ResponseStore } from '../../src/activities/model/response-store';

export function memoryBatchStore(opts: { lose?: boolean } = {}): ResponseStore & { marks: Map<string, BatchMark> } {
  const marks = new Map<string, BatchMark>();
  const id = (key: CallKey, digest: string) => `${key.workflowId}/${key.turn}/${digest}`;
  return {
    marks,
    get: () => Promise.resolve(undefined),
    put: () => Promise.resolve(),
    getRequest: () => Promise.resolve(undefined),
    putRequest: () => Promise.resolve(),
    settle: () => Promise.resolve(),
    getBatch: (key, digest) => Promise.resolve(marks.get(id(key, digest))),
    putBatch: (key, mark, digest) => {
      if (!(opts.lose && mark.batchId)) marks.set(id(key, digest), mark);
      return Promise.resolve();
    },
  };
}
