import { InvalidWorkerTuningError, workerTuning } from '../../../src/worker/config';

describe('worker tuning from the environment', () => {
  it('leaves the SDK defaults alone when nothing is set', () => {
    expect(workerTuning({})).toEqual({});
  });

  it('reads the four capacity settings', () => {
    expect(
      workerTuning({ FORKFLOW_MAX_CACHED_WORKFLOWS: '300', FORKFLOW_MAX_CONCURRENT_WORKFLOW_TASKS: ' 8 ', FORKFLOW_MAX_CONCURRENT_ACTIVITIES: '1000', FORKFLOW_STICKY_TIMEOUT_MS: '10000' }),
    ).toEqual({ maxCachedWorkflows: 300, maxConcurrentWorkflowTaskExecutions: 8, maxConcurrentActivityTaskExecutions: 1000, stickyQueueScheduleToStartTimeout: 10000 });
  });

  it('leaves the sticky timeout to the worker (500 ms) when unset, and refuses a malformed one by name', () => {
    expect(workerTuning({})).not.toHaveProperty('stickyQueueScheduleToStartTimeout');
    expect(() => workerTuning({ FORKFLOW_STICKY_TIMEOUT_MS: '10s' })).toThrow(/FORKFLOW_STICKY_TIMEOUT_MS/);
  });

  it.each([['0'], ['-5'], ['12abc'], ['1.5']])('refuses %j, naming the variable', (value) => {
    expect(() => workerTuning({ FORKFLOW_MAX_CACHED_WORKFLOWS: value })).toThrow(InvalidWorkerTuningError);
    expect(() => workerTuning({ FORKFLOW_MAX_CACHED_WORKFLOWS: value })).toThrow(/FORKFLOW_MAX_CACHED_WORKFLOWS/);
  });
});
