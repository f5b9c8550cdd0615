/**
 * Asking a tree's root by signal, in a tree that lends budget shares (src/shared/tree/tree-shares.ts):
 * an agent below the root sends `treeRequest` (an admission, a peer message's route) and waits
 * in its own workflow for the root's `treeAnswer`, which also carries share grants and recalls.
 * A signal takes no slot of the server's ten updates in flight per workflow, so the root takes
 * every request, from any number of worker processes, at its own pace: there is no per-process
 * limit to sum. Answers carry the tree's capability; an agent drops one that does not.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';
import { treeTokenSchema } from './tree-ledger';
import { admitRequestSchema, type AdmitResult } from './tree-ledger-requests';
import { routeRequestSchema, type RouteResult } from './team-ledger';
import type { ShareAnswer } from './tree-shares';

/** A request to the root: `from` answers arrive at that agent's workflow, by `id`. */
export const treeRequestSchema = schemaOnce('tree/tree-calls#treeRequestSchema', () => z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('admit'), id: z.string().min(1).max(200), from: z.string().min(1).max(1000), request: admitRequestSchema, token: treeTokenSchema.optional() }),
  z.strictObject({ kind: z.literal('route'), id: z.string().min(1).max(200), from: z.string().min(1).max(1000), request: routeRequestSchema, token: treeTokenSchema.optional() }),
]));
export type TreeRequest = z.output<typeof treeRequestSchema>;

/** The root's answers (share answers included), as an agent receives them. */
export type TreeAnswer = (ShareAnswer | { kind: 'admit'; id: string; result: AdmitResult } | { kind: 'route'; id: string; result: RouteResult }) & { token?: string };

const tokens = schemaOnce('tree/tree-calls#tokens', () => z.number().int().min(0));

/** Checked where an answer arrives: a forged grant would let an agent spend what its tree never lent. */
export const treeAnswerSchema = schemaOnce('tree/tree-calls#treeAnswerSchema', () => z.union([
  z.strictObject({ kind: z.literal('share'), id: z.string().min(1).max(200), tokens, token: treeTokenSchema.optional() }),
  z.strictObject({ kind: z.literal('share'), id: z.string().min(1).max(200), refused: z.string().max(2000), token: treeTokenSchema.optional() }),
  z.strictObject({ kind: z.literal('recall'), token: treeTokenSchema.optional() }),
  z.strictObject({
    kind: z.literal('admit'),
    id: z.string().min(1).max(200),
    result: z.union([z.strictObject({ ok: z.literal(true), budget: tokens, share: tokens.optional() }), z.strictObject({ ok: z.literal(false), reason: z.string().max(4000) })]),
    token: treeTokenSchema.optional(),
  }),
  z.strictObject({
    kind: z.literal('route'),
    id: z.string().min(1).max(200),
    result: z.union([
      z.strictObject({ ok: z.literal(true), targets: z.array(z.strictObject({ agentId: z.string().min(1).max(1000), name: z.string().max(64).optional() })).max(10_000), fromName: z.string().max(64).optional() }),
      z.strictObject({ ok: z.literal(false), reason: z.string().max(4000) }),
    ]),
    token: treeTokenSchema.optional(),
  }),
]));
