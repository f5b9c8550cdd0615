/**
 * The state a continuing run of an agent takes over (continue-as-new, or a finished agent
 * resumed by a message), as a versioned schema. It crosses runs inside workflow input, so it
 * is parsed — never cast — where a run starts; a state that does not parse fails that run at
 * once with `InvalidCarriedState` (non-retryable: retrying cannot fix the data).
 *
 * Versions: states written before the version field existed have no `v` and the v1 shape;
 * they read as v1. A change of shape adds `v: 2` beside v1 (with its converter), and keeps
 * the fixtures under test/fixtures/carried-state/ parsing.
 */
import { z } from 'zod';
import type { Usage } from './anthropic';
import { agentToolInput } from './agent-tools';
import { prefixRefSchema } from './prefix';
import type { ChildOutcome, ChildRecord, QueuedMessage } from './tree-input';

export const CARRIED_STATE_VERSION = 1;

const count = z.number().int().min(0);

const usageSchema = z.object({
  inputTokens: count,
  outputTokens: count,
  cacheReadInputTokens: count,
  cacheCreationInputTokens: count,
}) satisfies z.ZodType<Usage>;

const queuedMessageSchema = z.object({
  seq: count,
  priority: z.enum(['now', 'next', 'later']),
  kind: z.enum(['message', 'notification']),
  text: z.string(),
  from: z.string().optional(),
  summary: z.string().optional(),
  taskId: z.string().optional(),
  receivedAt: z.string(),
}) satisfies z.ZodType<QueuedMessage>;

const childOutcomeSchema = z.object({
  status: z.enum(['completed', 'failed', 'killed', 'timeout']),
  text: z.string(),
  error: z.string().optional(),
  usage: usageSchema,
  treeUsage: usageSchema,
  treeCostUsd: z.number().min(0),
  toolUses: count,
  durationMs: z.number().min(0),
  worktree: z.object({ path: z.string(), branch: z.string() }).optional(),
  conversation: prefixRefSchema.optional(),
}) satisfies z.ZodType<ChildOutcome>;

const childRecordSchema = z.object({
  agentId: z.string().min(1),
  name: z.string().optional(),
  kind: z.enum(['fork', 'spawn']),
  subagentType: z.string().optional(),
  description: z.string(),
  agentInput: agentToolInput,
  toolUseId: z.string(),
  mode: z.enum(['sync', 'background', 'remote']),
  taskQueue: z.string().optional(),
  state: z.enum(['running', 'completed', 'failed', 'killed', 'timeout']),
  notified: z.boolean(),
  startedAt: z.string(),
  result: childOutcomeSchema.optional(),
}) satisfies z.ZodType<ChildRecord>;

const carriedStateV1 = z.object({
  /** Absent in states written before versioning: those have the v1 shape. */
  v: z.literal(CARRIED_STATE_VERSION).default(CARRIED_STATE_VERSION),
  turns: count,
  toolUses: count,
  usage: usageSchema,
  /** Usage charged against the budget (a resumed agent starts a new budget). */
  budgetUsage: usageSchema,
  lastText: z.string().optional(),
  startedAt: z.string(),
  /** Wall-clock limit as an instant, if the fork had a timeout. */
  deadline: z.number().optional(),
  inbox: z.array(queuedMessageSchema),
  inboxSeq: count,
  children: z.array(childRecordSchema),
  childCounter: count,
  touched: z.array(z.string()),
  maxTurnsReached: z.boolean(),
});

export const carriedStateSchema = carriedStateV1;

/** The state as a run uses it (always the newest version). */
export type CarriedState = z.output<typeof carriedStateSchema>;
/** The state as it may arrive (an older or unversioned writer). */
export type CarriedStateInput = z.input<typeof carriedStateSchema>;

export type CarriedStateParse = { ok: true; state: CarriedState } | { ok: false; issues: string[] };

export function parseCarriedState(raw: unknown): CarriedStateParse {
  const parsed = carriedStateSchema.safeParse(raw);
  if (parsed.success) return { ok: true, state: parsed.data };
  return { ok: false, issues: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`) };
}
