/**
 * The budget-share part of a tree ledger (the rules are in src/shared/tree/tree-shares.ts): what the
 * root lent each agent and has not had back, and the agents waiting for a share. Schemas only,
 * with no import of the ledger, so the ledger's own schema can include them.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';

const count = schemaOnce('tree/tree-share-state#count', () => z.number().int().min(0));

/** The share fields of a ledger node (absent in ledgers of trees on the per-call protocol). */
export const shareNodeSchema = schemaOnce('tree/tree-share-state#shareNodeSchema', () => z.object({
  /**
   * Tokens lent to the agent and not given back: what it holds plus what it spent and has not
   * reported yet. The root counts the larger of this and `charged` against every budget above it.
   */
  lent: count.optional(),
  /** The share its latest admission lent (taken back if that admission's agent never starts). */
  admitShare: count.optional(),
  /** The root asked it to give its share back, and it has not answered yet. */
  recalled: z.literal(true).optional(),
}));

/** An agent waiting for a share, first come first served. */
export const shareWaiterSchema = schemaOnce('tree/tree-share-state#shareWaiterSchema', () => z.object({
  agentId: z.string().min(1),
  /** The ask's id (the grant answers it). */
  id: z.string().min(1),
  need: z.number().int().min(1),
  want: z.number().int().min(1),
}));
export type ShareWaiter = z.output<typeof shareWaiterSchema>;

/** Present in a ledger whose tree lends budget shares (its members charge locally). */
export const sharesStateSchema = schemaOnce('tree/tree-share-state#sharesStateSchema', () => z.object({
  v: z.literal(1),
  waiters: z.array(shareWaiterSchema),
}));
export type SharesState = z.output<typeof sharesStateSchema>;
