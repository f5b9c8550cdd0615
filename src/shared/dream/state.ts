/**
 * The durable record of a scope's consolidations: when the last one happened, when sessions
 * were last scanned, and the claim of a consolidation in progress (with the value to restore
 * if it fails). Stored as a JSON file beside the memory directory (src/activities/consolidation);
 * this module is the schema both sides agree on. Workflow-safe.
 */
import { z } from 'zod';
import { memoryScopeSchema } from './config';
import { schemaOnce } from '../base/schema-once';

const isoTime = schemaOnce('dream/state#isoTime', () => z.iso.datetime({ offset: true }));

export const runRefSchema = schemaOnce('dream/state#runRefSchema', () => z.strictObject({ workflowId: z.string().min(1), runId: z.string().min(1) }));

/**
 * A consolidation in progress. `lastConsolidatedAt` is advanced when it is claimed (so sessions
 * that close while it runs count towards the next one) and restored to `previous` if it fails —
 * by the run itself, or, if that run died, by the next run that finds the claim orphaned.
 */
export const dreamClaimSchema = schemaOnce('dream/state#dreamClaimSchema', () => z.strictObject({
  /** The autoDreamWorkflow run that claimed. */
  by: runRefSchema,
  /** The consolidation fork holding the lock. */
  lock: runRefSchema,
  /** The time recorded as `lastConsolidatedAt`. */
  at: isoTime,
  /** The value to restore on failure (null: never consolidated). */
  previous: isoTime.nullable(),
  /** Its staging folder under `runs/`. */
  runKey: z.string().min(1),
}));
export type DreamClaim = z.infer<typeof dreamClaimSchema>;

export const dreamStateSchema = schemaOnce('dream/state#dreamStateSchema', () => z.strictObject({
  version: z.literal(1),
  scope: memoryScopeSchema,
  lastConsolidatedAt: isoTime.nullable(),
  lastScanAt: isoTime.nullable(),
  claim: dreamClaimSchema.nullable(),
  lastOutcome: z.strictObject({ kind: z.string(), at: isoTime, by: runRefSchema }).nullable(),
}));
export type DreamState = z.infer<typeof dreamStateSchema>;

export function emptyDreamState(scope: string): DreamState {
  return { version: 1, scope, lastConsolidatedAt: null, lastScanAt: null, claim: null, lastOutcome: null };
}

/** What the workflow learns when it loads the state. */
export interface DreamStateView {
  /** The resolved state directory (absolute). */
  stateDir: string;
  state: DreamState;
  /** Set when an orphaned claim (its run is gone) was rolled back while loading. */
  recovered?: { claim: DreamClaim; restoredTo: string | null };
}
