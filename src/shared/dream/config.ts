/**
 * The configuration of one memory scope's consolidation: `autoDreamWorkflow`'s single
 * argument, validated the same way by the CLI, the client, a Schedule's action and the
 * workflow itself. JSON-safe and workflow-safe (no I/O, no clock).
 */
import { z } from 'zod';
import { durationSchema, toMs } from '../base/duration';
import { DELIVERY_MODES } from '../agents/agents';
import { describeIssues, type Validated } from '../wire/fork-input-validation';
import { schemaOnce } from '../base/schema-once';

/**
 * A memory scope names a memory directory and the agent runs that feed it. It becomes part of
 * workflow ids, a Schedule id and visibility queries, so it is kept to characters that need no
 * quoting anywhere.
 */
export const memoryScopeSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a memory scope is 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');

const absolutePath = (what: string) => z.string().regex(/^\//, `${what} must be an absolute path`);

/** A consolidation fork may not be given less than this: a shorter run cannot read anything. */
export const MIN_FORK_TIMEOUT_MS = 10_000;
/** The consolidation fork's time limit when none is given: interactive, and batched (a batch answers within 24 h). */
export const DEFAULT_FORK_TIMEOUT = '15m';
export const DEFAULT_BATCH_FORK_TIMEOUT = '24h';

export const dreamConfigSchema = schemaOnce('dream/config#dreamConfigSchema', () => z.strictObject({
  /** The scope: sessions are closed agent runs whose `ForkMemoryScope` is this. */
  memoryScope: memoryScopeSchema,
  /** The memory directory (an index file plus topic files); the only place the fork may write. */
  memoryDir: absolutePath('memoryDir'),
  /** Off: every run (manual ones too) ends `skipped` at the first gate. Pause the Schedule to stop only automatic runs. */
  enabled: z.boolean().default(true),
  /** Hours since the last consolidation before another one is due. */
  minHours: z.number().min(1, 'minHours must be at least 1').default(24),
  /** Sessions (closed agent runs of the scope) since the last consolidation before another one is due. */
  minSessions: z.number().int().min(1, 'minSessions must be at least 1').default(5),
  /** At most one session scan per this interval: the scan is the only gate that costs a visibility query. */
  scanThrottle: durationSchema.default('10m'),
  /**
   * How the consolidation fork's model calls go: `batch` (default) through the Message Batches
   * API at half price, since nobody waits on a dream; a provider without batches answers them
   * interactively. `interactive` for a dream someone watches.
   */
  delivery: z.enum(DELIVERY_MODES).default('batch'),
  /**
   * Wall-clock limit of the consolidation fork (at least 10 s). Default 24h under `batch`
   * delivery (each call may wait for its batch: results within 24 h, usually minutes), 15m
   * under `interactive`.
   */
  forkTimeout: durationSchema.refine((d) => toMs(d) >= MIN_FORK_TIMEOUT_MS, 'forkTimeout must be at least 10s').optional(),
  /** A lock holder running longer than forkTimeout plus this is stale and is taken over. */
  lockStaleGrace: durationSchema.default('10m'),
  /** The index file's name inside memoryDir. */
  indexFile: z
    .string()
    .regex(/^[^/\\\0]+$/, 'indexFile is a file name inside memoryDir, without slashes')
    .refine((n) => n !== '.' && n !== '..', 'indexFile must name a file')
    .default('MEMORY.md'),
  /** The prompt asks the fork to keep the index at most this many lines. */
  maxIndexLines: z.number().int().min(10).max(1000).default(200),
  /** Recent sessions whose transcripts are staged for the fork to read (newest first). */
  maxSessions: z.number().int().min(0).max(200).default(20),
  maxTurns: z.number().int().min(1).max(500).default(40),
  /** The fork's token budget (cache reads weighted as priced). */
  maxTokens: z.number().int().min(1000).default(200_000),
  model: z.string().min(1).optional(),
  /** An operator's explicit run: the time, throttle and session gates are skipped (the lock is not). */
  manual: z.boolean().default(false),
  /**
   * Appended verbatim to the consolidation prompt. For tests (they script the offline model's
   * tool calls with it) and for operators steering one run; not for routine use.
   */
  extraInstructions: z.string().min(1).max(20_000).optional(),
  /** Where the memory directory lives: the workspace root and the task queue of the worker that owns it. */
  workspace: z.strictObject({ root: absolutePath('workspace.root').optional(), taskQueue: z.string().min(1).optional() }).optional(),
  /** Where the scope's state file and staged transcripts live; default `<workspace root>/.forkflow/dream/<scope>`. Never inside memoryDir. */
  stateDir: absolutePath('stateDir').optional(),
  /**
   * Evaluate the gates and the lock's staleness as if it were this time (tests and ops).
   * Default: the workflow's clock. Not allowed on a Schedule.
   */
  now: z.iso.datetime({ offset: true }).optional(),
}).transform((c) => ({ ...c, forkTimeout: c.forkTimeout ?? (c.delivery === 'batch' ? DEFAULT_BATCH_FORK_TIMEOUT : DEFAULT_FORK_TIMEOUT) })));

/** The configuration as callers write it (defaults optional). */
export type DreamConfigInput = z.input<typeof dreamConfigSchema>;
/** The configuration with defaults applied. */
export type DreamConfig = z.output<typeof dreamConfigSchema>;

/** Validates a dream configuration; issues are one readable line each. */
export function validateDreamConfig(raw: unknown): Validated<DreamConfig> {
  const parsed = dreamConfigSchema.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, issues: describeIssues(parsed.error) };
}

/** JSON Schema of `autoDreamWorkflow`'s input, for other-language clients and `temporal workflow start`. */
export function dreamConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(dreamConfigSchema, { io: 'input', target: 'draft-7' });
}
