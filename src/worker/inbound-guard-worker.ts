/**
 * The SDK's Worker with one step added before each workflow activation: the payloads outside
 * callers wrote (start input, memo, signal, update and query arguments and headers) are
 * decoded first, and one that cannot be decoded reaches the workflow as a refusable stand-in
 * instead of failing the workflow task forever (src/payloads/inbound.ts says why and how).
 *
 * The SDK has no public hook before it decodes an activation (interceptors run after, inside
 * the workflow); `handleActivation` is the protected step that receives each activation, and
 * `Worker.create` / `runReplayHistories` build `new this(...)`, so a subclass gets it for live
 * and replay workers alike. TypeScript checks the override's signature against the SDK's: a
 * change there fails the build, and test/workflow/poison-payloads.test.ts fails if the step
 * stops running.
 */
import { Runtime, Worker } from '@temporalio/worker';
import { guardActivation } from '../payloads/inbound';

export class InboundGuardWorker extends Worker {
  protected override async handleActivation(...args: Parameters<Worker['handleActivation']>): ReturnType<Worker['handleActivation']> {
    const [, { activation, synthetic }] = args;
    if (!synthetic) {
      try {
        await guardActivation(activation, this.options.loadedDataConverter, (what, reason) => {
          Runtime.instance().logger.warn('An input that cannot be decoded reaches the workflow as refused', { what, reason, runId: activation.runId ?? undefined });
        });
      } catch {
        // Storage could not be reached: the SDK's own decoding fails the same way, and the
        // task is retried, as without this step.
      }
    }
    return super.handleActivation(...args);
  }
}
