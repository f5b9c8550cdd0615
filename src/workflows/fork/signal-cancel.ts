/**
 * Signal handlers that wait (the tree's root answering a member by signal, a member giving its
 * share back once its calls settle) run in the workflow's root scope, so the agent's own
 * cancellation cuts their wait short with a CancelledFailure. The SDK takes a cancellation
 * thrown out of a signal handler of a cancelled workflow as the workflow's outcome: the agent
 * would close CANCELED, with no result and no partial results for its parent, instead of
 * ending `killed` through runFork (fork-workflow.ts). Seen in CI: a 3-level tree's root closed
 * CANCELED (most likely cancelled while answering its middle agent's admission;
 * test/workflow/signal-cancel.test.ts reproduces it with a route request).
 *
 * Wrapped here, such a handler ends quietly on cancellation: what it was doing ends with the
 * agent (its tree is being cancelled with it). No patch: a run that took the old way closed
 * CANCELED at that task, so no open run can reach it, and no committed history ends CANCELED
 * (docs/guides/patches.md: the committed histories decide).
 */
import { isCancellation, log } from '@temporalio/workflow';

/** `handler`, ending quietly when the agent's cancellation interrupts it. */
export function quietOnCancel<A extends unknown[]>(signal: string, handler: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await handler(...args);
    } catch (err) {
      if (!isCancellation(err)) throw err;
      // The workflow logger adds the run's ids.
      log.info('signal handler stopped by the agent\'s cancellation', { signal });
    }
  };
}
