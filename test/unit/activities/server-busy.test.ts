import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { serverBusy, whileServerBusy } from '../../../src/activities/tree';

/** Shaped as the client throws them: a ServiceError whose cause carries the gRPC status code. */
function serviceError(code: number, details: string): Error {
  const cause = Object.assign(new Error(`${code} ${details}`), { code, details });
  return Object.assign(new Error('Workflow Update failed'), { name: 'ServiceError', cause });
}

describe('asking a tree root again while the server is busy', () => {
  it('knows busy (RESOURCE_EXHAUSTED, UNAVAILABLE) from a refusal', () => {
    expect(serverBusy(serviceError(8, 'limit on number of concurrent in-flight updates has been reached (10)'))).toBe(true);
    expect(serverBusy(serviceError(14, 'workflow update was aborted'))).toBe(true);
    expect(serverBusy(serviceError(3, 'invalid argument'))).toBe(false);
    expect(serverBusy(Object.assign(new Error('gone'), { name: 'WorkflowNotFoundError' }))).toBe(false);
    expect(serverBusy(undefined)).toBe(false);
  });

  it('asks again when the run it reached closed first (continued as new), never when the root refused', () => {
    const failed = (type: string, message: string) => new WorkflowUpdateFailedError('Workflow Update failed', ApplicationFailure.create({ type, message, nonRetryable: true }));
    expect(serverBusy(failed('AcceptedUpdateCompletedWorkflow', 'Workflow Update failed because the Workflow completed before the Update completed.'))).toBe(true);
    expect(serverBusy(failed('UnprocessedUpdate', "Workflow Update is rejected because it wasn't processed by worker."))).toBe(true);
    expect(serverBusy(failed('Error', 'Invalid tree ledger request: agentId: Required'))).toBe(false);
  });

  it('asks again after growing pauses until the root answers', async () => {
    const pauses: number[] = [];
    let calls = 0;
    const answer = await whileServerBusy(
      () => {
        calls++;
        return calls < 4 ? Promise.reject(serviceError(8, 'limit on number of concurrent in-flight updates has been reached (10)')) : Promise.resolve('reserved');
      },
      (ms) => {
        pauses.push(ms);
        return Promise.resolve();
      },
    );
    expect(answer).toBe('reserved');
    expect(calls).toBe(4);
    expect(pauses).toHaveLength(3);
    // Jittered around 50, 100 and 200 ms.
    expect(pauses[0]).toBeGreaterThanOrEqual(25);
    expect(pauses[0]).toBeLessThanOrEqual(75);
    expect(pauses[2]).toBeGreaterThanOrEqual(100);
    expect(pauses[2]).toBeLessThanOrEqual(300);
  });

  it('passes any other error on at once, and a busy one after the last attempt', async () => {
    let calls = 0;
    await expect(
      whileServerBusy(
        () => {
          calls++;
          return Promise.reject(serviceError(3, 'malformed'));
        },
        () => Promise.resolve(),
      ),
    ).rejects.toThrow('Workflow Update failed');
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      whileServerBusy(
        () => {
          calls++;
          return Promise.reject(serviceError(8, 'busy'));
        },
        () => Promise.resolve(),
        3,
      ),
    ).rejects.toThrow('Workflow Update failed');
    expect(calls).toBe(3);
  });
});
