/**
 * Inputs from outside, decoded before the workflow task runs, where a failure can still be
 * answered. The SDK (1.24) resolves external-storage references and runs the codecs over the
 * whole activation before the workflow sees it, and converts arguments to values inside the
 * workflow before any interceptor or handler: a payload that fails any of the three steps fails
 * the workflow *task*, which the server retries forever. One signal with a fake
 * `binary/encrypted` payload, a reference to a blob that does not exist, or JSON that does not
 * parse would wedge an agent for good (queries answer FAILED_PRECONDITION, only terminate works).
 *
 * So the worker (src/worker/inbound-guard-worker.ts) hands every activation here first. For the
 * payloads anyone with access to the namespace can write — start arguments, memo, and the
 * headers and arguments of signals, updates and queries — each is resolved, decrypted and
 * converted now. One that decodes is put back decoded (the SDK then passes it through: it is
 * neither a reference nor encrypted); one that cannot is replaced by a plain stand-in object
 * naming why (src/shared/wire/undecodable.ts), which every handler's validation refuses: a signal is
 * dropped with a logged reason (`status.rejectedSignals`), an update is rejected, a query
 * fails, a start fails as invalid input. A header that cannot be decoded is dropped.
 *
 * Payloads the workflow's own commands produced (activity and child results) are left to the
 * SDK: a failure there is this deployment's own fault (a key or blob folder missing), which a
 * retry after the fix outlasts.
 *
 * Only failures that no retry can change become stand-ins — a payload is decided the same way
 * on every replay: bytes that do not decrypt (an unknown key id counts: keys are added to every
 * reader before any writer uses them, see README "Encryption"), a reference that is malformed
 * or names a blob that is not there. A storage that cannot be reached right now is thrown, and
 * the workflow task is retried as the SDK would have. (So a worker must see the deployment's
 * blob folder or bucket: one that does not refuses large messages and starts as "not found".)
 */
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import type { coresdk, temporal } from '@temporalio/proto';
import { jsonTextDepth, MAX_INPUT_CHARS, MAX_JSON_DEPTH } from '../shared/wire/limits';
import { sendMessageSignal, TREE_MESSAGES } from '../shared/wire/messages';
import { undecodable } from '../shared/wire/undecodable';
import { EncryptionCodec } from './codec';
import { workflowBinding } from './binding';
import { opened, Undecodable, type Opened } from './inbound-open';
import { guardActivityResult, guardChildResult, type ResultTrust } from './inbound-results';

/** Decoded payloads past this size are refused before anything parses them. */
export const MAX_INBOUND_BYTES = 2 * MAX_INPUT_CHARS;

type Activation = coresdk.workflow_activation.IWorkflowActivation;
type Payloads = Payload[] | null | undefined;
type Headers = Record<string, Payload> | null | undefined;
type Failure = temporal.api.failure.v1.IFailure;

const encodingOf = (p: Payload): string => (p.metadata?.encoding ? Buffer.from(p.metadata.encoding).toString('utf8') : '');
const sizeOf = (p: Payload): number => (p.data?.length ?? 0) + Object.values(p.metadata ?? {}).reduce((n, v) => n + (v?.length ?? 0), 0);

/**
 * What an input must be: encrypted and bound to one of `bindings` — always, or only when
 * `when` says its value needs it (a `sendMessage` that carries a tree's capability).
 */
interface Rule {
  bindings: readonly string[];
  when?: (value: unknown) => boolean;
  /** Who may send it, for the refusal. */
  who: string;
}
type Required = Rule | undefined;

const INPUTS_RULE = 'this worker takes inputs only from holders of the deployment\'s keys (FORKFLOW_REQUIRE_ENCRYPTED_INPUTS)';
const TREE_RULE = 'a message of an agent tree comes only from forkflow\'s workers, encrypted for the agent it reaches';

function carriesToken(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, TREE_MESSAGES.tokenField);
}

/** Storage, then the codecs (in reverse), then the payload converter: the SDK's own order. */
async function decoded(payload: Payload, dc: LoadedDataConverter, required?: Required, seen?: (open: Opened) => void): Promise<Payload> {
  const open = await opened(payload, dc);
  seen?.(open);
  const p = open.payload;
  const unfit = required && (!open.encrypted ? 'it is not encrypted' : !open.binding || !required.bindings.includes(open.binding) ? 'it was encrypted for another workflow (or by a client that binds nothing)' : undefined);
  if (unfit && !required.when) throw new Undecodable(`${unfit}, and ${required.who}`);
  if (sizeOf(p) > MAX_INBOUND_BYTES) throw new Undecodable(`it is larger than ${MAX_INBOUND_BYTES} bytes`);
  const encoding = encodingOf(p);
  if (encoding === 'json/plain' && p.data && jsonTextDepth(p.data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new Undecodable(`it is nested deeper than ${MAX_JSON_DEPTH} levels (MAX_JSON_DEPTH)`);
  }
  let value: unknown;
  try {
    value = dc.payloadConverter.fromPayload(p);
  } catch {
    throw new Undecodable(`it is not a readable "${encoding.slice(0, 60) || 'unknown'}" payload`);
  }
  if (unfit && required.when?.(value)) throw new Undecodable(`${unfit}, and ${required.who}`);
  return p;
}

/** The payload decoded, or the stand-in when it cannot be; a passing storage outage is thrown. */
async function guarded(payload: Payload, dc: LoadedDataConverter, what: string, refused: (what: string, reason: string) => void, required?: Required, seen?: (open: Opened) => void): Promise<Payload> {
  try {
    return await decoded(payload, dc, required, seen);
  } catch (err) {
    if (!(err instanceof Undecodable)) throw err;
    refused(what, err.message);
    return dc.payloadConverter.toPayload(undecodable(err.message));
  }
}

async function guardList(list: Payloads, dc: LoadedDataConverter, what: string, refused: Refused, required?: Required, seen?: (open: Opened) => void): Promise<void> {
  if (!list) return;
  for (let i = 0; i < list.length; i++) list[i] = await guarded(list[i]!, dc, what, refused, required, i === 0 ? seen : undefined);
}

/** Headers that do not decode are dropped (interceptors read them as plain values). */
async function guardHeaders(headers: Headers, dc: LoadedDataConverter, what: string, refused: Refused): Promise<void> {
  if (!headers) return;
  for (const [key, payload] of Object.entries(headers)) {
    try {
      headers[key] = await decoded(payload, dc);
    } catch (err) {
      if (!(err instanceof Undecodable)) throw err;
      refused(`${what} header ${key.slice(0, 100)}`, err.message);
      delete headers[key];
    }
  }
}

/** A failure carried into a run at its start: any payload of it that does not decode replaces it whole. */
async function guardFailure(failure: Failure | null | undefined, dc: LoadedDataConverter): Promise<Failure | null | undefined> {
  if (!failure) return failure;
  try {
    for (let f: Failure | null | undefined = failure, depth = 0; f && depth < 20; f = f.cause, depth++) {
      if (f.encodedAttributes) f.encodedAttributes = await decoded(f.encodedAttributes, dc);
      const details = f.applicationFailureInfo?.details?.payloads;
      if (details) for (let i = 0; i < details.length; i++) details[i] = await decoded(details[i]!, dc);
    }
    return failure;
  } catch (err) {
    if (!(err instanceof Undecodable)) throw err;
    return { message: `A failure carried into this run could not be decoded: ${err.message}`, source: 'forkflow' };
  }
}

type Refused = (what: string, reason: string) => void;

/** What the worker asks of inbound payloads beyond their being decodable. */
export interface InboundTrust {
  namespace: string;
  /** The run's workflow id, when the worker knows it (every activation but a run's first). */
  workflowId?: string;
  /**
   * From this time on (ms since the epoch, by the clock of the workflow task, which history
   * records: replays decide alike), start inputs, signals and updates must come encrypted and
   * bound to the workflow they reach (FORKFLOW_REQUIRE_ENCRYPTED_INPUTS).
   */
  inputsFrom?: number;
  /** What this run's results must be, decided at its start (the value `guardActivation` returned then). */
  results?: ResultTrust;
}

/** A scheduled run's id is its schedule's action id and the time (`<id>-2026-12-07T10:00:00Z`): its input is bound to the former. */
function startBindings(namespace: string, workflowId: string): string[] {
  const scheduled = /^(.+)-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.exec(workflowId);
  return [workflowBinding(namespace, workflowId), ...(scheduled?.[1] ? [workflowBinding(namespace, scheduled[1])] : [])];
}

function millisOf(ts: { seconds?: number | Long | null; nanos?: number | null } | null | undefined): number {
  if (!ts) return 0;
  return Number(ts.seconds ?? 0) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}
type Long = { toString(): string };

/**
 * Decodes, in place, the payloads of `activation` that callers outside the workflow wrote, and
 * replaces those that cannot be decoded by a stand-in. `refused` hears of each one (for a log
 * line). With encryption keys, it also judges the results that reach the run
 * (inbound-results.ts) and, from `trust.inputsFrom`, refuses inputs not encrypted for it.
 * Returns what the run's results must be when the activation starts the run. Throws only when
 * storage cannot be reached (the task is then retried).
 */
export async function guardActivation(activation: Activation, dc: LoadedDataConverter, refused: Refused = () => undefined, trust?: InboundTrust): Promise<ResultTrust | undefined> {
  const keyed = dc.payloadCodecs.some((c) => c instanceof EncryptionCodec);
  const inputsStrict = keyed && trust?.inputsFrom !== undefined && millisOf(activation.timestamp) >= trust.inputsFrom;
  let results = trust?.results;
  const namespace = trust?.namespace ?? '';
  let workflowId = trust?.workflowId ?? results?.workflowId;
  const mine = () => (workflowId ? [workflowBinding(namespace, workflowId)] : []);
  // Any input, from FORKFLOW_REQUIRE_ENCRYPTED_INPUTS's time on; a tree's messages, in every run whose start was bound.
  const rule = (kind: 'signal' | 'update', name: string): Required => {
    if (inputsStrict) return { bindings: mine(), who: INPUTS_RULE };
    if (!results?.strict) return undefined;
    if ((kind === 'signal' ? TREE_MESSAGES.signals : TREE_MESSAGES.updates).includes(name)) return { bindings: mine(), who: TREE_RULE };
    if (kind === 'signal' && name === sendMessageSignal.name) return { bindings: mine(), when: carriesToken, who: TREE_RULE };
    return undefined;
  };
  let started: ResultTrust | undefined;
  for (const job of activation.jobs ?? []) {
    if (job.initializeWorkflow) {
      const init = job.initializeWorkflow;
      workflowId = init.workflowId ?? workflowId;
      const bindings = workflowId ? startBindings(namespace, workflowId) : [];
      let bound = false;
      await guardList(init.arguments, dc, 'start input', refused, inputsStrict ? { bindings, who: INPUTS_RULE } : undefined, (o) => (bound = o.encrypted && o.binding !== undefined && bindings.includes(o.binding)));
      await guardHeaders(init.headers, dc, 'start', refused);
      const memo = init.memo?.fields;
      if (memo) for (const key of Object.keys(memo)) memo[key] = await guarded(memo[key]!, dc, `memo ${key.slice(0, 100)}`, refused);
      await guardList(init.lastCompletionResult?.payloads, dc, 'last completion result', refused);
      init.continuedFailure = await guardFailure(init.continuedFailure, dc);
      // A run whose own start came encrypted for it takes only results written for its calls.
      started = results = { namespace, workflowId: workflowId ?? '', strict: keyed && bound && trust !== undefined };
    } else if (job.signalWorkflow) {
      const name = job.signalWorkflow.signalName ?? '';
      await guardList(job.signalWorkflow.input, dc, `signal ${name}`, refused, rule('signal', name));
      await guardHeaders(job.signalWorkflow.headers, dc, `signal ${name}`, refused);
    } else if (job.doUpdate) {
      const name = job.doUpdate.name ?? '';
      await guardList(job.doUpdate.input, dc, `update ${name}`, refused, rule('update', name));
      await guardHeaders(job.doUpdate.headers, dc, `update ${name}`, refused);
    } else if (job.queryWorkflow) {
      const name = job.queryWorkflow.queryType ?? '';
      await guardList(job.queryWorkflow.arguments, dc, `query ${name}`, refused);
      await guardHeaders(job.queryWorkflow.headers, dc, `query ${name}`, refused);
    } else if (keyed && job.resolveActivity) {
      await guardActivityResult(job.resolveActivity, dc, results ?? { namespace, workflowId: workflowId ?? '', strict: false }, (reason) => refused(`activity ${job.resolveActivity?.seq} result`, reason));
    } else if (keyed && job.resolveChildWorkflowExecution && results) {
      await guardChildResult(job.resolveChildWorkflowExecution, dc, results, (reason) => refused(`child ${job.resolveChildWorkflowExecution?.seq} result`, reason));
    }
  }
  return started;
}
