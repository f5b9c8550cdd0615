import { ActivityCancellationDetails } from '@temporalio/common';
import { cancelsUpstream } from '../../../src/activities/model/call-model';

describe('a cancelled model call and its upstream request at the gateway', () => {
  it('is stopped upstream only when the workflow asked for the cancel', () => {
    expect(cancelsUpstream(new ActivityCancellationDetails({ cancelRequested: true }))).toBe(true);
  });

  it('keeps running for the retry when the server gave the attempt up (timed out or not found after an outage), paused or reset it, or nothing says why', () => {
    for (const why of [{ notFound: true }, { timedOut: true }, { paused: true }, { reset: true }, { workerShutdown: true }, {}]) {
      expect(cancelsUpstream(new ActivityCancellationDetails(why))).toBe(false);
    }
    expect(cancelsUpstream(undefined)).toBe(false);
  });
});
