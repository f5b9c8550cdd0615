/**
 * The SDK's Worker with one step added before each workflow activation: the payloads outside
 * callers wrote (start input, memo, signal, update and query arguments and headers) are
 * decoded first, and one that cannot be decoded reaches the workflow as a refusable stand-in
 * instead of failing the workflow task forever (src/payloads/inbound.ts says why and how).
 * With encryption keys, the same step judges the results that reach a run: a result that is
 * not encrypted and bound to its call becomes a failure (src/payloads/inbound-results.ts), and
 * from `requireEncryptedInputsFrom` on, inputs not encrypted for their workflow are refused.
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
import type { ResultTrust } from '../payloads/inbound-results';

export class InboundGuardWorker extends Worker {
  /** What each run's results must be, decided at its start; kept with the SDK's state of the run. */
  private readonly runTrust = new WeakMap<object, ResultTrust>();
  /** From this time on (ms since the epoch), inputs must be encrypted for their workflow (FORKFLOW_REQUIRE_ENCRYPTED_INPUTS). */
  requireEncryptedInputsFrom: number | undefined = undefined;

  protected override async handleActivation(...args: Parameters<Worker['handleActivation']>): ReturnType<Worker['handleActivation']> {
    const [workflow, { activation, synthetic }] = args;
    let started: ResultTrust | undefined;
    if (!synthetic) {
      try {
        started = await guardActivation(
          activation,
          this.options.loadedDataConverter,
          (what, reason) => {
            Runtime.instance().logger.warn('An input that cannot be decoded reaches the workflow as refused', { what, reason, runId: activation.runId ?? undefined });
          },
          {
            namespace: this.options.namespace,
            ...(workflow ? { workflowId: workflow.info.workflowId } : {}),
            ...(this.requireEncryptedInputsFrom !== undefined ? { inputsFrom: this.requireEncryptedInputsFrom } : {}),
            ...(workflow && this.runTrust.has(workflow) ? { results: this.runTrust.get(workflow)! } : {}),
          },
        );
      } catch {
        // Storage could not be reached: the SDK's own decoding fails the same way, and the
        // task is retried, as without this step.
      }
    }
    const out = await super.handleActivation(...args);
    if (started && out.state) this.runTrust.set(out.state, started);
    return out;
  }
}
