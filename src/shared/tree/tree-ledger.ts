/**
 * The tree ledger: what a whole agent tree has spent and may still spend, kept by its root
 * (the one authority; see SEMANTICS "Limits and budgets" and src/workflows/fork/tree-authority.ts).
 *
 * - Admission: a sub-agent starts only when the root admits it — under the tree's running
 *   and total-spawn limits, counted here and nowhere else (no visibility lag) — and is
 *   granted at most what every one of its ancestors has left.
 * - Spend: before each model call an agent reserves an upper bound of that call's charge
 *   (its input counted in full plus the `max_tokens` it is allowed); after the call the
 *   actual usage is charged and the reservation released. A reservation is granted only
 *   when it fits under every ancestor's budget, so the tree's charged tokens never pass
 *   the root's budget, and each subtree stays inside what its root was granted.
 * - Facts: per-agent usage, turns, tool calls and cost, kept for every agent the tree ever
 *   ran (never trimmed), carried across continue-as-new and a resumed agent's runs.
 *
 * Every operation is idempotent (admission by agent id, reserve and charge by agent and
 * turn), because they arrive by activity retries and replays. Pure functions of plain data:
 * the root's workflow owns the only copy.
 *
 * This file owns the ledger's shape (schemas), a new ledger, the tree's capability and who
 * belongs to it; the requests are in tree-ledger-requests.ts, the rules that read and write
 * spend in tree-ledger-rules.ts, and what status and results show in tree-ledger-view.ts.
 */
import { z } from 'zod';
import { ZERO_USAGE, type Usage } from '../messages-api/anthropic';
import { schemaOnce } from '../base/schema-once';
import { shareNodeSchema, sharesStateSchema } from './tree-share-state';

export const TREE_LEDGER_VERSION = 1;

/** The failure type of a model call the budget cannot pay for: the agent stops `budget_exhausted`, it does not fail. */
export const BUDGET_EXHAUSTED_FAILURE = 'BudgetExhausted';

const count = schemaOnce('tree/tree-ledger#count', () => z.number().int().min(0));

/** A Usage as carried in workflow state (also the carried state's). */
const usageFields = {
  inputTokens: count,
  outputTokens: count,
  cacheReadInputTokens: count,
  cacheCreationInputTokens: count,
  cacheCreation1hInputTokens: count.optional(),
};

export const usageSchema = schemaOnce('tree/tree-ledger#usageSchema', () => z.object({
  ...usageFields,
  /** The part served by the Message Batches API (half price). */
  batch: z.object(usageFields).optional(),
}) satisfies z.ZodType<Usage>);

const nodeSchema = schemaOnce('tree/tree-ledger#nodeSchema', () => z.object({
  agentId: z.string().min(1),
  parentId: z.string().min(1).optional(),
  model: z.string(),
  /** Tokens this agent and its subtree may charge (its grant). */
  budget: count,
  state: z.enum(['running', 'ended']),
  usage: usageSchema,
  /** `tokensCharged(usage)`, kept so subtree sums need no recomputation. */
  charged: count,
  costUsd: z.number().min(0),
  turns: count,
  toolUses: count,
  /** The newest turn charged (a charge or reservation for it or an older one is a repeat). */
  lastTurn: count,
  /** The reservation of a model call in flight (one at a time: an agent's calls are sequential). */
  reserved: z.object({ turn: count, tokens: count }).optional(),
  /** Runs of this agent (1 + times it was resumed). */
  runs: z.number().int().min(1),
  /** Keep-alive calls charged (cacheWhileWaiting `keep-alive`): the newest one's number; absent before the first. */
  keepAlives: count.optional(),
  /** forkflow compaction calls charged (src/shared/context/): the newest one's number; absent before the first. */
  compactions: count.optional(),
  /** Its name in the tree (the Agent call's `name`), for peer messages by name (src/shared/tree/team-ledger.ts). */
  name: z.string().min(1).max(64).optional(),
  /** A teammate: the team it joined (its lead is its parent). */
  team: z.string().min(1).max(64).optional(),
  /** Peer messages it sent and received, counted when routed (team-ledger.ts); `lastKey`: the newest sent, so a retry counts once. */
  messages: z.object({ sent: count, received: count, lastKey: z.string().optional() }).optional(),
  /** Its budget share, in a tree that lends shares (src/shared/tree/tree-shares.ts). */
  ...shareNodeSchema.shape,
}));
export type LedgerNode = z.output<typeof nodeSchema>;

export const treeLimitsSchema = schemaOnce('tree/tree-ledger#treeLimitsSchema', () => z.object({
  /** Agents of the tree running at once, the root included. */
  maxTreeRunning: z.number().int().min(1),
  /** Sub-agents the tree may start in all (resumes are not new spawns). */
  maxTreeSpawns: z.number().int().min(0),
}));
export type TreeLimits = z.output<typeof treeLimitsSchema>;

/**
 * A tree's capability: a random id the root draws at its start (the SDK's seeded `uuid4`) and
 * passes down in every sub-agent's input (`treeToken`). Child reports and ledger requests carry
 * it; the receiver drops or rejects what does not. Trees started before it existed have none
 * and accept requests without one.
 */
export const treeTokenSchema = schemaOnce('tree/tree-ledger#treeTokenSchema', () => z.string().min(16).max(200));

export const treeLedgerSchema = schemaOnce('tree/tree-ledger#treeLedgerSchema', () => z.object({
  v: z.literal(TREE_LEDGER_VERSION),
  rootId: z.string().min(1),
  /** The tree's capability (absent in ledgers of trees started before it). */
  token: treeTokenSchema.optional(),
  limits: treeLimitsSchema,
  spawned: count,
  /** By agent id (a plain object: it crosses continue-as-new). */
  nodes: z.record(z.string(), nodeSchema),
  /**
   * Ids whose admission was taken back before their agent started (newest last, at most
   * WITHDRAWN_KEPT): an admission that arrives after its withdrawal (a timed-out attempt's
   * update landing late) is refused, so the ledger never lists an agent that never ran.
   */
  withdrawn: z.array(z.string()).optional(),
  /** Present when the tree lends budget shares instead of reserving per call (src/shared/tree/tree-shares.ts). */
  shares: sharesStateSchema.optional(),
}));
export type TreeLedger = z.output<typeof treeLedgerSchema>;

/** A new ledger holding its root; `token`: the tree's capability, when it has one. */
export function newLedger(root: { agentId: string; model: string; budget: number; name?: string }, limits: TreeLimits, token?: string): TreeLedger {
  const node = { ...freshNode(root.agentId, undefined, root.model, root.budget), ...(root.name ? { name: root.name } : {}) };
  return { v: TREE_LEDGER_VERSION, rootId: root.agentId, ...(token ? { token } : {}), limits, spawned: 0, nodes: { [root.agentId]: node } };
}

/** Why a request is refused for its capability, if it is: a ledger with a token takes only requests that carry it. */
export function capabilityIssue(ledger: Pick<TreeLedger, 'token' | 'rootId'>, token: string | undefined): string | undefined {
  if (ledger.token === undefined || token === ledger.token) return undefined;
  return `it does not carry the capability of tree ${ledger.rootId} (only the tree's own agents may send it)`;
}

/** Whether `agentId` ever ran in this tree. */
export function isMember(ledger: TreeLedger, agentId: string): boolean {
  return Object.hasOwn(ledger.nodes, agentId);
}


/** A node as a new agent starts it (its first run, nothing spent). */
export function freshNode(agentId: string, parentId: string | undefined, model: string, budget: number): LedgerNode {
  return { agentId, ...(parentId ? { parentId } : {}), model, budget, state: 'running', usage: ZERO_USAGE, charged: 0, costUsd: 0, turns: 0, toolUses: 0, lastTurn: 0, runs: 1 };
}

/**
 * Why a teammate cannot join `team` under `leadId`, if it cannot: a team has one lead, a lead
 * leads one team, and names are unique in a team (the lead's own name included).
 */
export function teamClash(ledger: TreeLedger, leadId: string, team: string, name: string | undefined): string | undefined {
  const nodes = Object.values(ledger.nodes);
  const other = nodes.find((n) => n.team === team && n.parentId !== leadId);
  if (other) return `Team "${team}" is led by ${other.parentId}, not by you: pick another team_name.`;
  const own = nodes.find((n) => n.team !== undefined && n.team !== team && n.parentId === leadId);
  if (own) return `You lead team "${own.team}" already (an agent leads one team): use team_name "${own.team}".`;
  if (!name) return 'A teammate needs a name (unique in its team).';
  const lead = ledger.nodes[leadId];
  if (lead?.name === name) return `"${name}" is your own name in team "${team}": pick another name.`;
  const taken = nodes.find((n) => n.team === team && n.name === name);
  if (taken) return `Team "${team}" already has a member called "${name}" (${taken.agentId}): names are unique in a team, pick another.`;
  return undefined;
}
