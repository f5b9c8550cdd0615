/**
 * The state a continuing run of an agent takes over (continue-as-new, or a finished agent
 * resumed by a message), as a versioned schema. It crosses runs inside workflow input, so it
 * is parsed — never cast — where a run starts; a state that does not parse fails that run at
 * once with `InvalidCarriedState` (non-retryable: retrying cannot fix the data).
 *
 * Versions: states written before the version field existed have no `v` and the v1 shape;
 * they read as v1. v2 adds optional parts only (the tree ledger a root keeps, the count of
 * children started, the usage of children no longer on record, the cache-break watch, context management), so a v1 state reads as v2
 * unchanged. A change of shape adds a version beside these (with its converter), and keeps
 * the fixtures under test/fixtures/carried-state/ parsing.
 */
import { z } from 'zod';
import { agentToolInput } from '../tree/agent-tools';
import { prefixRefSchema } from '../prefix/prefix';
import { carriedCacheSchema } from '../prefix/cache-break';
import { carriedWarmthSchema } from '../prefix/cache-warmth';
import { carriedContextSchema } from '../context/state';
import { treeLedgerSchema, usageSchema } from '../tree/tree-ledger';
import { spendSchema } from '../tree/tree-shares';
import type { ChildOutcome, ChildRecord, QueuedMessage } from '../tree/tree-input';
import { shellTaskRecordSchema } from '../tools/shell-tasks';
import { schemaOnce } from '../base/schema-once';
import { COUNTERFACTUAL_PARTS, retryMarkSchema } from '../prefix/time-travel';
import { carriedMcpSchema } from '../tools/mcp';
import { failoverStateSchema } from '../providers/failover';

export const CARRIED_STATE_VERSION = 2;

const count = schemaOnce('wire/carried-state#count', () => z.number().int().min(0));

const queuedMessageSchema = schemaOnce('wire/carried-state#queuedMessageSchema', () => z.object({
  seq: count,
  priority: z.enum(['now', 'next', 'later']),
  kind: z.enum(['message', 'notification', 'command']),
  text: z.string(),
  from: z.string().optional(),
  summary: z.string().optional(),
  taskId: z.string().optional(),
  command: z.object({ name: z.string(), args: z.string().optional() }).optional(),
  receivedAt: z.string(),
}) satisfies z.ZodType<QueuedMessage>);

/** A child's outcome (also what a child reports to its parent when it ends: src/shared/wire/messages.ts). */
export const childOutcomeSchema = schemaOnce('wire/carried-state#childOutcomeSchema', () => z.object({
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
  turns: count.optional(),
  budgetUsage: usageSchema.optional(),
  childCounter: count.optional(),
  model: z.string().optional(),
  cache: carriedCacheSchema.optional(),
  ownFrom: count.optional(),
}) satisfies z.ZodType<ChildOutcome>);

const childRecordSchema = schemaOnce('wire/carried-state#childRecordSchema', () => z.object({
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
  budget: count.optional(),
}) satisfies z.ZodType<ChildRecord>);

/** Usage of finished children taken off the record (trimmed, or summed up before a resume). */
export const foldedUsageSchema = schemaOnce('wire/carried-state#foldedUsageSchema', () => z.object({ usage: usageSchema, costUsd: z.number().min(0), agents: count }));
export type FoldedUsage = z.output<typeof foldedUsageSchema>;

const carriedStateV2 = schemaOnce('wire/carried-state#carriedStateV2', () => z.object({
  /** Absent in states written before versioning: those have the v1 shape; v1 reads as v2 (only optional parts were added). */
  v: z
    .union([z.literal(1), z.literal(CARRIED_STATE_VERSION)])
    .default(CARRIED_STATE_VERSION)
    .transform(() => CARRIED_STATE_VERSION),
  turns: count,
  toolUses: count,
  usage: usageSchema,
  /** Usage charged against the budget (v1: a resumed agent started a new one; v2: it keeps it unless `freshBudget`). */
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
  /** v2: the tree ledger, carried by a tree's root. */
  ledger: treeLedgerSchema.optional(),
  /** v2: children this agent started (maxSpawns), resumes not counted. */
  spawned: count.optional(),
  /** v2: usage of children no longer on record. */
  folded: foldedUsageSchema.optional(),
  /** v2: the run resumed by a message starts a new budget (the caller granted one); otherwise it keeps `budgetUsage`. */
  freshBudget: z.boolean().optional(),
  /** v2: the run continued as new while waiting for its children after its final reply; the next run goes on waiting. */
  waitingForChildren: z.boolean().optional(),
  /** v2: the run continued as new while idle, to move to a new build (Worker Versioning); the next run goes on idling this many ms. */
  idleMs: z.number().min(0).optional(),
  /** v2: cache breaks so far and the previous request (absent in states written before it: counting starts again). */
  cache: carriedCacheSchema.optional(),
  /** v2: keep-alive calls so far and their usage (cacheWhileWaiting `keep-alive`; included in `usage`). */
  keepAlive: z.object({ calls: count, usage: usageSchema }).optional(),
  /** v2: calls and usage per provider that served them (its status's `providers`); absent: none counted yet. */
  providers: z.record(z.string().min(1).max(64), z.object({ calls: count, usage: usageSchema })).optional(),
  /** v2: the model call a keep-alive repeats, when this run continued while waiting under `keep-alive`. */
  warmth: carriedWarmthSchema.optional(),
  /** v2: where the agent's live stream goes on (its seqs stay monotonic across runs; absent: 0). */
  streamOffset: count.optional(),
  /** v2: when a stream subscriber last polled (workflow time, ms): the next run lingers for it too. */
  streamPolledAt: z.number().optional(),
  /** v2: context management (where the model's context starts, compactions, what they cost and saved); absent: nothing managed yet. */
  context: carriedContextSchema.optional(),
  /** v2: what the agent's first run was (a counterfactual fork, a replay) and the retry it came from, for its status (src/shared/prefix/time-travel.ts). */
  lineage: z
    .object({
      counterfactual: z.object({ changed: z.array(z.enum(COUNTERFACTUAL_PARTS)) }).optional(),
      replay: z.boolean().optional(),
      retry: retryMarkSchema.optional(),
    })
    .optional(),
  /** v2: its MCP servers as recorded at its start (their sessions stay open across continue-as-new). */
  mcp: carriedMcpSchema.optional(),
  /** v2: failover of its model calls (src/shared/providers/failover.ts); absent before its first switch. */
  failover: failoverStateSchema.optional(),
  /** v2: its background shell tasks (src/shared/tools/shell-tasks.ts) and the counter their ids are numbered by; absent: it never started one. */
  shells: z.object({ records: z.array(shellTaskRecordSchema), counter: count }).optional(),
  /** v2: a teammate's team state: its lead asked it to end; its plan was approved (src/workflows/fork/team-inbox.ts). */
  team: z.object({ shutdown: z.boolean().optional(), planApproved: z.boolean().optional() }).optional(),
  /** v2: where its own messages start in its conversation, after what it inherited as a fork (its output file shows from there); absent: not known to the run that wrote it. */
  ownFrom: count.optional(),
  /**
   * v2: in a tree that lends budget shares (src/shared/tree/tree-shares.ts), what the agent holds of
   * its share, its asks so far (their ids), and what it spent since it last told its root.
   */
  share: z.object({ held: z.number().int(), asks: count, unsent: spendSchema }).optional(),
}));

export const carriedStateSchema = carriedStateV2;

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
