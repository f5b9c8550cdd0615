/**
 * What a workflow receives in place of an input its worker could not decode (a signal, update,
 * query or start argument that is not decryptable, names a stored blob that does not exist,
 * is not valid JSON, or is nested past MAX_JSON_DEPTH): a plain object carrying the reason.
 * The worker swaps it in before the workflow task runs (src/payloads/inbound.ts), so a bad
 * payload is a refused message or a failed start, never a workflow task that fails forever.
 *
 * Every handler's zod schema refuses this object anyway (it has none of the fields they want);
 * handlers that can say more ask `undecodableReason` first. Workflow-safe: pure code.
 */

/** The one key of the stand-in object. */
export const UNDECODABLE_KEY = '$forkflowUndecodable';

/** The stand-in for an input that could not be decoded. */
export function undecodable(reason: string): Record<string, string> {
  return { [UNDECODABLE_KEY]: reason };
}

/** The reason, when `raw` is the stand-in for an undecodable input. */
export function undecodableReason(raw: unknown): string | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const reason = (raw as Record<string, unknown>)[UNDECODABLE_KEY];
  return typeof reason === 'string' ? `its payload could not be decoded: ${reason}` : undefined;
}
