/**
 * Results reaching a workflow, judged before the SDK decodes them (the inbound guard,
 * inbound.ts, calls this for every activity and child result of an activation).
 *
 * Whoever polls a task queue answers its tasks: a worker without the deployment's keys (a
 * rogue process with access to the namespace) could answer a hook with `allow`, or a tool
 * call with a result of its choosing, in plaintext — which decoding used to let through — or
 * with a ciphertext lifted from another call's history. With keys, in a run whose own start
 * was encrypted for it (every run a forkflow client or worker starts; see `RunTrust`), each
 * result must be encrypted and bound to the call it answers (binding.ts): the activity with
 * this sequence number of this workflow. A failure, likewise: its message and details
 * encrypted and bound. A result that is not is replaced by a failure that says so — the
 * workflow handles it like any failed call (a hook that fails denies, a tool call reads an
 * error); nothing fails the workflow task, and the decision, made from history and the keys
 * alone, is the same on every replay.
 *
 * Runs started in plaintext (or before bindings existed) are judged as before: their plaintext
 * results pass, marked for the codec (vetted.ts), which otherwise refuses plaintext in an
 * activity's context.
 */
import { type LoadedDataConverter, type Payload } from '@temporalio/common';
import { temporal, type coresdk } from '@temporalio/proto';
import { activityBinding } from './binding';
import { isEncrypted } from './codec';
import { opened, retrievedOrSame, Undecodable } from './inbound-open';
import { vetted } from './vetted';

type Failure = temporal.api.failure.v1.IFailure;
type ResolveActivity = coresdk.workflow_activation.IResolveActivity;
type ResolveChild = coresdk.workflow_activation.IResolveChildWorkflowExecution;

/** What the worker asks of one run's results. */
export interface ResultTrust {
  namespace: string;
  workflowId: string;
  /** Results must be encrypted and bound to their call (the run's own start was). */
  strict: boolean;
}

/** The failure type of a refused result, for logs and for whoever reads the workflow's history. */
export const REFUSED_RESULT_TYPE = 'UnauthenticatedResult';

/** Stands for a name the resolution does not carry. */
const REFUSED_NAME = '(answer refused)';

const RETRY_NON_RETRYABLE = temporal.api.enums.v1.RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE;

function refusal(reason: string): Failure {
  return { message: reason, source: 'forkflow', applicationFailureInfo: { type: REFUSED_RESULT_TYPE, nonRetryable: true } };
}

/** Why an answer payload is not this call's, or undefined when it is (it is then decoded in place). */
async function judged(list: Payload[], i: number, dc: LoadedDataConverter, binding: string | undefined): Promise<string | undefined> {
  let open;
  try {
    open = await opened(list[i]!, dc);
  } catch (err) {
    // A storage that cannot be reached now is no verdict: the task is retried, as the SDK would.
    if (!(err instanceof Undecodable)) throw err;
    return `it cannot be read (${err.message})`;
  }
  if (!open.encrypted) return 'it is not encrypted: a worker without the deployment\'s keys answered';
  if (binding !== undefined && open.binding !== binding) return 'it was written for another call (a ciphertext lifted from elsewhere in history)';
  if (binding === undefined && !open.binding?.startsWith('["workflow",')) return 'it was not written as a workflow\'s result';
  list[i] = vetted(open.payload);
  return undefined;
}

/** Every payload list of a failure chain. */
function failurePayloads(failure: Failure | null | undefined): Payload[][] {
  const lists: Payload[][] = [];
  for (let f = failure, depth = 0; f && depth < 20; f = f.cause, depth++) {
    if (f.encodedAttributes) lists.push([f.encodedAttributes]);
    for (const details of [f.applicationFailureInfo?.details, f.timeoutFailureInfo?.lastHeartbeatDetails, f.canceledFailureInfo?.details, f.resetWorkflowFailureInfo?.lastHeartbeatDetails]) {
      if (details?.payloads?.length) lists.push(details.payloads);
    }
  }
  return lists;
}

/** Puts decoded lists back where they came from in the failure chain (encodedAttributes is a single payload). */
function putBack(failure: Failure | null | undefined, lists: Payload[][]): void {
  let n = 0;
  for (let f = failure, depth = 0; f && depth < 20; f = f.cause, depth++) {
    if (f.encodedAttributes) f.encodedAttributes = lists[n++]![0]!;
    for (const details of [f.applicationFailureInfo?.details, f.timeoutFailureInfo?.lastHeartbeatDetails, f.canceledFailureInfo?.details, f.resetWorkflowFailureInfo?.lastHeartbeatDetails]) {
      if (details?.payloads?.length) details.payloads = lists[n++]!;
    }
  }
}

/** Why a failure is not this call's, or undefined (its payloads then decoded in place). */
async function judgedFailure(failure: Failure | null | undefined, dc: LoadedDataConverter, binding: string | undefined): Promise<string | undefined> {
  // A failure a worker raised carries its message encrypted (failure-converter.ts): one without came from elsewhere.
  for (let f = failure, depth = 0; f && depth < 20; f = f.cause, depth++) {
    if (f.applicationFailureInfo && !f.encodedAttributes) return 'its failure is not encrypted: a worker without the deployment\'s keys answered';
  }
  const lists = failurePayloads(failure);
  for (const list of lists) {
    for (let i = 0; i < list.length; i++) {
      const why = await judged(list, i, dc, binding);
      if (why) return `its failure: ${why}`;
    }
  }
  putBack(failure, lists);
  return undefined;
}

/** Lenient: plaintext payloads are handed on marked for the codec; the rest is left to the SDK as before. */
async function passPlain(list: Payload[] | null | undefined, dc: LoadedDataConverter): Promise<void> {
  if (!list) return;
  for (let i = 0; i < list.length; i++) {
    const p = await retrievedOrSame(list[i]!, dc);
    if (!isEncrypted(p)) list[i] = vetted(p);
  }
}

/**
 * Judges an activity's resolution in place. `refused` hears of a refusal (for the log); the
 * resolution then becomes a non-retryable failure of type `UnauthenticatedResult`.
 */
export async function guardActivityResult(job: ResolveActivity, dc: LoadedDataConverter, trust: ResultTrust, refused: (reason: string) => void): Promise<void> {
  const result = job.result;
  if (!result || job.isLocal) return;
  if (!trust.strict) {
    if (result.completed?.result) {
      const p = [result.completed.result];
      await passPlain(p, dc);
      result.completed.result = p[0];
    }
    for (const list of failurePayloads(result.failed?.failure ?? result.cancelled?.failure)) await passPlain(list, dc);
    return;
  }
  const binding = activityBinding(trust.namespace, trust.workflowId, job.seq ?? 0);
  let why: string | undefined;
  if (result.completed?.result) {
    const list = [result.completed.result];
    why = await judged(list, 0, dc, binding);
    if (!why) result.completed.result = list[0];
  } else if (result.failed) {
    why = await judgedFailure(result.failed.failure, dc, binding);
  } else if (result.cancelled) {
    why = await judgedFailure(result.cancelled.failure, dc, binding);
  }
  if (!why) return;
  const reason = `The answer to activity ${job.seq} was refused: ${why}.`;
  refused(reason);
  job.result = {
    failed: {
      failure: {
        message: 'Activity task failed',
        source: 'forkflow',
        // The type is not in the resolution; the SDK needs one (the workflow's handling reads the cause).
        activityFailureInfo: { activityType: { name: result.failed?.failure?.activityFailureInfo?.activityType?.name ?? REFUSED_NAME }, activityId: String(job.seq), retryState: RETRY_NON_RETRYABLE },
        cause: refusal(reason),
      },
    },
  };
}

/** Judges a child workflow's result in place (a run's results are written by workers, bound to that run). */
export async function guardChildResult(job: ResolveChild, dc: LoadedDataConverter, trust: ResultTrust, refused: (reason: string) => void): Promise<void> {
  const result = job.result;
  if (!result || !trust.strict) return;
  let why: string | undefined;
  if (result.completed?.result) {
    const list = [result.completed.result];
    why = await judged(list, 0, dc, undefined);
    if (!why) result.completed.result = list[0];
  } else if (result.failed) {
    why = await judgedFailure(result.failed.failure, dc, undefined);
  }
  if (!why) return;
  const reason = `The result of child workflow ${job.seq} was refused: ${why}.`;
  refused(reason);
  const known = result.failed?.failure?.childWorkflowExecutionFailureInfo;
  const info = { namespace: trust.namespace, workflowType: known?.workflowType ?? { name: REFUSED_NAME }, workflowExecution: known?.workflowExecution ?? { workflowId: REFUSED_NAME, runId: '' }, retryState: RETRY_NON_RETRYABLE };
  job.result = { failed: { failure: { message: 'Child Workflow execution failed', source: 'forkflow', childWorkflowExecutionFailureInfo: info, cause: refusal(reason) } } };
}
