/**
 * What an encrypted payload is bound to: the workflow or the activity it was written for.
 *
 * The SDK tells a codec whose payload it encodes (its serialization context: the workflow for
 * start inputs, signals, updates and workflow results; the activity — workflow id and
 * activity id — for activity inputs, heartbeats and results). The encryption codec writes
 * that, as a binding, into the payload's own metadata before it encrypts it, so the binding
 * is as authentic as the content: only a holder of the keys can write one. A reader who
 * knows which call a payload answers (the inbound guard, src/payloads/inbound.ts) compares:
 * a result lifted from another call's history — an `allow` of an earlier hook, a tool result
 * of another agent — no longer passes for this call's answer.
 *
 * The binding lives inside the ciphertext, so readers that only decrypt (the codec server,
 * other languages' codecs following the README's envelope) are unaffected; they see one more
 * metadata entry, which payload converters ignore.
 */
import type { SerializationContext } from '@temporalio/common';

/** The metadata key of the binding, inside the encrypted payload. */
export const BINDING_METADATA = 'forkflow-binding';

/** The binding of payloads written for `context`, or undefined when the SDK gave none (or a local activity's). */
export function bindingOf(context: SerializationContext | undefined): string | undefined {
  if (!context) return undefined;
  if (context.type === 'workflow') return JSON.stringify(['workflow', context.namespace, context.workflowId]);
  // A local activity's result never leaves the worker that ran it: nothing to bind.
  if (context.isLocal || !context.activityId || !context.workflowId) return undefined;
  return JSON.stringify(['activity', context.namespace, context.workflowId, context.activityId]);
}

/** The binding of a workflow's own inputs (start, signals, updates). */
export function workflowBinding(namespace: string, workflowId: string): string {
  return bindingOf({ type: 'workflow', namespace, workflowId })!;
}

/**
 * The binding of an activity's result as its workflow expects it. The SDK names an activity
 * by its sequence number unless the workflow gives it an id, and forkflow's workflows never do.
 */
export function activityBinding(namespace: string, workflowId: string, seq: number): string {
  return bindingOf({ type: 'activity', namespace, workflowId, activityId: String(seq), isLocal: false })!;
}
