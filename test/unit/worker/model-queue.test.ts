import { InvalidModelQueueError, modelQueueSettings } from '../../../src/worker/config';

describe('the model queue a worker serves, and its server-kept rate', () => {
  it('is off when nothing is set', () => {
    expect(modelQueueSettings({}, {})).toEqual({});
  });

  it('reads the environment, and flags win over it', () => {
    expect(modelQueueSettings({}, { FORKFLOW_MODEL_QUEUE: 'models', FORKFLOW_MODEL_REQUESTS_PER_MINUTE: ' 90 ' })).toEqual({ queue: 'models', requestsPerMinute: 90 });
    expect(modelQueueSettings({ queue: 'mine', rate: '2.5' }, { FORKFLOW_MODEL_QUEUE: 'models', FORKFLOW_MODEL_REQUESTS_PER_MINUTE: '90' })).toEqual({ queue: 'mine', requestsPerMinute: 2.5 });
    expect(modelQueueSettings({ queue: 'mine' }, {})).toEqual({ queue: 'mine' });
  });

  it.each([['0'], ['-5'], ['12abc'], ['1e3'], ['']])('refuses the rate %j, naming the setting', (rate) => {
    expect(() => modelQueueSettings({ queue: 'q', rate }, {})).toThrow(InvalidModelQueueError);
    expect(() => modelQueueSettings({ queue: 'q', rate }, {})).toThrow(/rate/);
  });

  it('refuses a rate without a queue: it would limit nothing', () => {
    expect(() => modelQueueSettings({}, { FORKFLOW_MODEL_REQUESTS_PER_MINUTE: '60' })).toThrow(/needs a model queue/);
  });
});
