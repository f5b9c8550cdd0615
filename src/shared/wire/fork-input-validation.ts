/**
 * Checking a fork input and a parent snapshot at the boundary: the limits first (an input its
 * worker could not decode, or past them, is refused whole, before zod or any hash), then the
 * schemas, with every issue as one readable line; and the input's JSON Schema.
 */
import { z } from 'zod';
import { forkInputSchema, type ForkInput } from './fork-input';
import { cacheSafeParamsSchema, type CacheSafeParams } from './cache-safe-params';
import { INPUT_LIMITS, jsonLimitIssue, MAX_PROMPT_CHARS, tooLong } from './limits';
import { undecodableReason } from './undecodable';

/** zod issues as one readable line each: `path: message`. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${i.message}`);
}

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: string[] };

/**
 * Validates a fork input. The parent snapshot is returned as the caller's own object, not a
 * zod copy, so its bytes reach the provider unchanged (see src/shared/messages-api/anthropic.ts).
 */
/**
 * Why forkflow sends no sampling settings (seed 004 carries temperature/topP with a fork's
 * generation config): the Messages API version it speaks (2026-10-21) refuses them, newer
 * models refuse them outright, and extended thinking fixes them; they are not part of the
 * prompt cache either. A parent snapshot's are kept as provenance only.
 */
export const SAMPLING_NOT_SENT =
  'forkflow sends no sampling settings: the Messages API version it speaks (2026-10-21) refuses temperature, top_p and top_k, and extended thinking fixes them. Leave it out; steer the model with its prompt or effort instead.';

/** A sampling setting a caller put on the fork input itself (refused by name, not as an unknown key). */
function samplingAsked(raw: unknown): string | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  return ['temperature', 'topP', 'topK', 'top_p', 'top_k'].find((k) => Object.prototype.hasOwnProperty.call(raw, k));
}

export function validateForkInput(raw: unknown): Validated<ForkInput> {
  // Before zod and before anything hashes it: an input its worker could not decode, or past
  // the limits (src/shared/wire/limits.ts), is refused whole.
  const prompt = (raw as { prompt?: unknown } | null)?.prompt;
  if (typeof prompt === 'string' && prompt.length > MAX_PROMPT_CHARS) return { ok: false, issues: [`prompt: ${tooLong(MAX_PROMPT_CHARS, 'MAX_PROMPT_CHARS')}`] };
  const refused = undecodableReason(raw) ?? jsonLimitIssue(raw, INPUT_LIMITS, 'the forkWorkflow input');
  if (refused) return { ok: false, issues: [`(input): ${refused}`] };
  const sampling = samplingAsked(raw);
  if (sampling) return { ok: false, issues: [`${sampling}: ${SAMPLING_NOT_SENT}`] };
  const parsed = forkInputSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: describeIssues(parsed.error) };
  const parent = (raw as { parent?: CacheSafeParams }).parent;
  return { ok: true, value: { ...parsed.data, parent } };
}

/** Validates a parent snapshot (`snapshotWorkflow`'s input): the same limits first, then its schema. */
export function validateSnapshot(raw: unknown): Validated<CacheSafeParams> {
  const refused = undecodableReason(raw) ?? jsonLimitIssue(raw, INPUT_LIMITS, 'the snapshot');
  if (refused) return { ok: false, issues: [`(input): ${refused}`] };
  const parsed = cacheSafeParamsSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: describeIssues(parsed.error) };
  return { ok: true, value: raw as CacheSafeParams };
}

/** JSON Schema of the workflow input, for other-language clients. */
export function forkInputJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(forkInputSchema, { io: 'input', target: 'draft-7' });
}
