/**
 * Peer messages inside an agent tree, routed by its root's ledger (src/shared/tree/tree-ledger.ts).
 * The ledger already knows every agent the tree ever ran; it also keeps each one's name and,
 * for a teammate, its team (registered at admission), so it is the one directory a name is
 * looked up in, and the one place messages are counted.
 *
 * How `to` resolves, for a sender of the tree (first match wins):
 * 1. `*`: every running member of the sender's team but the sender (a teammate's team is its
 *    lead and the lead's other teammates; a lead's, its teammates). Never a structured message.
 * 2. an agent id of the tree.
 * 3. `lead`, from a teammate: its team's lead.
 * 4. a name in the sender's team (its lead's name included).
 * 5. a name held by exactly one agent of the tree.
 * An agent that ended cannot be reached this way (its parent resumes it by SendMessage).
 *
 * Counting is idempotent by `key` (the sender's tool call id): an agent's SendMessage calls run
 * one at a time, so a repeat of its newest key is a retry, and counts nothing again.
 * Pure functions of plain data: the root's workflow owns the only copy.
 */
import { z } from 'zod';
import { schemaOnce } from '../base/schema-once';
import { treeTokenSchema, type LedgerNode, type TreeLedger } from './tree-ledger';

/** `to` that reaches the sender's whole team. */
export const BROADCAST = '*';
/** `to` that reaches a teammate's lead. */
export const LEAD = 'lead';

export const routeRequestSchema = schemaOnce('tree/team-ledger#routeRequestSchema', () => z.strictObject({
  from: z.string().min(1).max(1000),
  to: z.string().min(1).max(1000),
  /** The sender's tool call id: a retry of the same call is counted once. */
  key: z.string().min(1).max(200),
  /** A JSON object message (never broadcast). */
  structured: z.boolean(),
  token: treeTokenSchema.optional(),
}));
export type RouteRequest = z.output<typeof routeRequestSchema>;

export interface RouteTarget {
  agentId: string;
  name?: string;
}
/** `fromName`: the sender's name in the tree, for the receiver's header. */
export type RouteResult = { ok: true; targets: RouteTarget[]; fromName?: string } | { ok: false; reason: string };

const target = (n: LedgerNode): RouteTarget => ({ agentId: n.agentId, ...(n.name ? { name: n.name } : {}) });
const label = (n: LedgerNode): string => (n.name ? `${n.name} (${n.agentId})` : n.agentId);

/** The team an agent belongs to: as a teammate (its `team`) or as the parent of teammates. */
export function teamOf(ledger: TreeLedger, agentId: string): { team: string; leadId: string } | undefined {
  const node = ledger.nodes[agentId];
  if (!node) return undefined;
  if (node.team && node.parentId) return { team: node.team, leadId: node.parentId };
  const mate = Object.values(ledger.nodes).find((n) => n.team !== undefined && n.parentId === agentId);
  return mate?.team ? { team: mate.team, leadId: agentId } : undefined;
}

/** Every member of a team, its lead first, then its teammates in the order they joined. */
export function rosterOf(ledger: TreeLedger, team: string): LedgerNode[] {
  const mates = Object.values(ledger.nodes).filter((n) => n.team === team);
  const lead = mates[0]?.parentId ? ledger.nodes[mates[0].parentId] : undefined;
  return lead ? [lead, ...mates] : mates;
}

function resolve(ledger: TreeLedger, sender: LedgerNode, req: RouteRequest): LedgerNode[] | string {
  const team = teamOf(ledger, sender.agentId);
  if (req.to === BROADCAST) {
    if (req.structured) return 'A structured message is never broadcast: send it to one agent by name.';
    if (!team) return `You are in no team, so "*" reaches nobody: address one agent by its name or id.`;
    const others = rosterOf(ledger, team.team).filter((n) => n.agentId !== sender.agentId && n.state === 'running');
    return others.length > 0 ? others : `No other member of team "${team.team}" is running.`;
  }
  const byId = ledger.nodes[req.to];
  if (byId) return [byId];
  if (req.to === LEAD && team && team.leadId !== sender.agentId) return [ledger.nodes[team.leadId]!];
  const inTeam = team ? rosterOf(ledger, team.team).filter((n) => n.name === req.to) : [];
  if (inTeam.length > 0) return inTeam.slice(0, 1);
  const named = Object.values(ledger.nodes).filter((n) => n.name === req.to);
  if (named.length === 1) return named;
  if (named.length > 1) return `${named.length} agents of this tree are called "${req.to}" (${named.map((n) => n.agentId).join(', ')}): address one by its agent id.`;
  const names = [...new Set(Object.values(ledger.nodes).flatMap((n) => (n.name && n.agentId !== sender.agentId ? [n.name] : [])))].slice(0, 30);
  return `No running agent "${req.to}" in this agent tree: messages reach only agents of your own tree. ${names.length ? `Names you can use: ${names.join(', ')}` : 'No agent of it has a name'}${team ? ` (and "${BROADCAST}" for your team${team.leadId !== sender.agentId ? `, "${LEAD}" for its lead` : ''})` : ''}; or an agent id.`;
}

/** Resolves a peer message's receivers and counts it (once per `key`), or says why it cannot go. */
export function routeMessage(ledger: TreeLedger, req: RouteRequest): RouteResult {
  const sender = ledger.nodes[req.from];
  if (!sender) return { ok: false, reason: `Agent ${req.from} is not part of tree ${ledger.rootId}.` };
  const found = resolve(ledger, sender, req);
  if (typeof found === 'string') return { ok: false, reason: found };
  if (found.some((n) => n.agentId === sender.agentId)) return { ok: false, reason: 'That is you: a message to yourself is not sent.' };
  const ended = found.find((n) => n.state !== 'running');
  if (ended) {
    const how = ended.parentId === sender.agentId ? 'SendMessage to it by its agent id resumes it' : `its parent ${ended.parentId ?? '(none)'} can resume it`;
    return { ok: false, reason: `${label(ended)} has finished, so it reads no more messages (${how}).` };
  }
  const counts = sender.messages ?? { sent: 0, received: 0 };
  if (counts.lastKey !== req.key) {
    sender.messages = { ...counts, sent: counts.sent + 1, lastKey: req.key };
    for (const n of found) n.messages = { sent: n.messages?.sent ?? 0, received: (n.messages?.received ?? 0) + 1, ...(n.messages?.lastKey ? { lastKey: n.messages.lastKey } : {}) };
  }
  return { ok: true, targets: found.map(target), ...(sender.name ? { fromName: sender.name } : {}) };
}
