/**
 * The requests a tree's ledger takes from its agents (admit, reserve, charge, agent ended) and
 * their answers. They arrive from other workflows' activities, so each is a strict schema the
 * root validates at its handler (src/workflows/fork/tree-authority.ts) before the rules in
 * tree-ledger-rules.ts apply it.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';
import { treeTokenSchema, usageSchema } from './tree-ledger';

export const admitRequestSchema = schemaOnce('tree/tree-ledger-requests#admitRequestSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  parentId: z.string().min(1).max(1000),
  model: z.string().min(1).max(200),
  kind: z.enum(['spawn', 'resume']),
  /** The budget the parent's policy would give it; the grant is at most this. */
  want: z.number().int().min(1),
  /** The tree's capability (`treeTokenSchema`). */
  token: treeTokenSchema.optional(),
  /** Its name (Agent `name`), registered for peer messages. */
  name: z.string().min(1).max(64).optional(),
  /** A teammate: the team it joins (names are unique in a team; a parent leads at most one team). */
  team: z.string().min(1).max(64).optional(),
  /** In a tree that lends shares: about what one call of the child could charge (its parent's estimate), which sizes its first share. */
  callTokens: z.number().int().min(1).optional(),
}));
export type AdmitRequest = z.output<typeof admitRequestSchema>;
/** `share`: in a tree that lends shares, the tokens lent with the admission (src/shared/tree/tree-shares.ts). */
export type AdmitResult = { ok: true; budget: number; share?: number } | { ok: false; reason: string };

export const reserveRequestSchema = schemaOnce('tree/tree-ledger-requests#reserveRequestSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  turn: z.number().int().min(1),
  /** Tokens the call charges at the least (its input in full, plus one output token). */
  need: z.number().int().min(1),
  /** Tokens it could charge at the most (input plus its `max_tokens`). */
  want: z.number().int().min(1),
  /** The agent's tool calls so far (a fact recorded with its spend). */
  toolUses: z.number().int().min(0),
  /** The tree's capability (`treeTokenSchema`). */
  token: treeTokenSchema.optional(),
}));
export type ReserveRequest = z.output<typeof reserveRequestSchema>;
/**
 * `tokens`: the most the call may charge (≥ need). Refused when even `need` does not fit;
 * `wait` when it would fit once the reservations of calls in flight are charged (they charge
 * at most what they reserved, usually much less): ask again shortly.
 */
export type ReserveResult = { ok: true; tokens: number } | { ok: false; left: number; reason: string; wait: boolean };

export const chargeRequestSchema = schemaOnce('tree/tree-ledger-requests#chargeRequestSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  turn: z.number().int().min(1),
  model: z.string().min(1).max(200),
  usage: usageSchema,
  toolUses: z.number().int().min(0),
  /** The provider that served the call, when not the tree's own (a fallback, an agent elsewhere): priced as it configures `model`. */
  provider: z.string().min(1).max(64).optional(),
  /**
   * A keep-alive call (cacheWhileWaiting): the agent's n-th, counted over all its runs. It is
   * charged once per number, counts no turn, and was not reserved (it repeats a request the
   * agent already paid for, and reads it at a tenth).
   */
  keepAlive: z.number().int().min(1).optional(),
  /** The tree's capability (`treeTokenSchema`). */
  token: treeTokenSchema.optional(),
  /**
   * A forkflow compaction call (a summary of the agent's older turns): the agent's n-th, over
   * all its runs. Charged once per number, apart from turns, and not reserved (it comes before
   * the turn's own call, which reserves as usual).
   */
  compaction: z.number().int().min(1).optional(),
}));
export type ChargeRequest = z.output<typeof chargeRequestSchema>;

export const agentEndedSchema = schemaOnce('tree/tree-ledger-requests#agentEndedSchema', () => z.strictObject({
  agentId: z.string().min(1).max(1000),
  /** False: admitted, but its parent never started it (see `withdraw`). */
  started: z.literal(false).optional(),
  /** The tree's capability (`treeTokenSchema`). */
  token: treeTokenSchema.optional(),
}));
