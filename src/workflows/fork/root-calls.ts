/**
 * Requests to a tree's root by signal, in a tree that lends budget shares (src/shared/tree/tree-calls.ts
 * says why): an agent below the root asks it to admit a child or route a peer message, and
 * waits in its own workflow for the answer. The root answers each request once, by signal, in
 * the order it takes them; the rules are the ledger's own (admission, routes, the admission's share).
 */
import { condition, getExternalWorkflowHandle, isCancellation, log, setHandler, workflowInfo } from '@temporalio/workflow';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { treeAnswerSignal, treeRequestSignal } from '../../shared/wire/messages';
import { routeMessage, type RouteRequest, type RouteResult } from '../../shared/tree/team-ledger';
import { treeRequestSchema, type TreeAnswer } from '../../shared/tree/tree-calls';
import { capabilityIssue, type TreeLedger } from '../../shared/tree/tree-ledger';
import type { AdmitRequest, AdmitResult } from '../../shared/tree/tree-ledger-requests';
import { admit } from '../../shared/tree/tree-ledger-rules';
import { admissionShare, lendsShares, withdrawShare } from '../../shared/tree/tree-shares';
import { undecodableReason } from '../../shared/wire/undecodable';
import type { ForkAgent } from './agent';
import { quietOnCancel } from './signal-cancel';
import { deliver, registerAnswerHandler } from './tree-shares';

/** How long an agent waits for its root's answer before it gives up on the request. */
export const ROOT_ANSWER_TIMEOUT_MS = 5 * 60_000;

/** Admits a child in the root's ledger; in a tree that lends shares, with the share its admission lends. */
export function admitHere(book: TreeLedger, req: AdmitRequest): AdmitResult {
  const result = admit(book, req);
  if (!result.ok || !lendsShares(book)) return result;
  return { ...result, share: admissionShare(book, req.agentId, req.callTokens) };
}

/** Answers that arrived, by request id (kept until their request takes them). */
const answers = new WeakMap<ForkAgent, Map<string, TreeAnswer>>();
const counters = new WeakMap<ForkAgent, number>();

function answersOf(agent: ForkAgent): Map<string, TreeAnswer> {
  let map = answers.get(agent);
  if (!map) answers.set(agent, (map = new Map<string, TreeAnswer>()));
  return map;
}

/** Registers the answer handler (every agent of a tree that lends shares, the root included). */
export function registerRootCallAnswers(agent: ForkAgent): void {
  registerAnswerHandler(agent, (answer) => {
    if (answer.kind === 'admit' || answer.kind === 'route') answersOf(agent).set(answer.id, answer);
  });
}

/** Asks the root; undefined when it is gone or did not answer in time (the caller says so to the model). */
async function callRoot(agent: ForkAgent, kind: 'admit' | 'route', request: AdmitRequest | RouteRequest, token: string | undefined): Promise<TreeAnswer | undefined> {
  const n = (counters.get(agent) ?? 0) + 1;
  counters.set(agent, n);
  const id = `${kind}-${workflowInfo().runId.slice(0, 8)}-${n}`;
  try {
    await getExternalWorkflowHandle(agent.rootAgentId).signal(treeRequestSignal, { kind, id, from: agent.agentId, request, ...(token ? { token } : {}) } as never);
  } catch (err) {
    if (isCancellation(err)) throw err;
    return undefined;
  }
  const map = answersOf(agent);
  const came = await condition(() => map.has(id), ROOT_ANSWER_TIMEOUT_MS);
  const answer = map.get(id);
  map.delete(id);
  return came ? answer : undefined;
}

/** An admission asked of the root by signal. */
export async function admitByRoot(agent: ForkAgent, req: AdmitRequest, token: string | undefined): Promise<AdmitResult> {
  const answer = await callRoot(agent, 'admit', req, token);
  if (answer?.kind === 'admit') return answer.result;
  throw new Error(`the tree's root ${agent.rootAgentId} did not answer`);
}

/** A peer message's route asked of the root by signal. */
export async function routeByRoot(agent: ForkAgent, req: RouteRequest): Promise<RouteResult> {
  const answer = await callRoot(agent, 'route', req, req.token);
  if (answer?.kind === 'route') return answer.result;
  return { ok: false, reason: `The tree's root did not answer, so nothing was sent. Try again.` };
}

/** The root takes requests (validated, with the tree's capability) and answers each by signal. */
export function registerRequestHandler(agent: ForkAgent): void {
  setHandler(treeRequestSignal, quietOnCancel('treeRequest', async (raw: unknown) => {
    const undecodable = undecodableReason(raw);
    if (undecodable) return agent.rejectSignal('treeRequest', [undecodable]);
    const p = treeRequestSchema.safeParse(raw);
    if (!p.success) return agent.rejectSignal('treeRequest', describeIssues(p.error));
    const book = agent.book!;
    const req = p.data;
    // The request carries the tree's capability (and what it asks may carry it too: then the same).
    const inner = req.request.token;
    const refused = capabilityIssue(book, req.token) ?? (inner !== undefined ? capabilityIssue(book, inner) : undefined);
    if (refused) {
      log.warn('treeRequest refused', { agentId: agent.agentId, from: req.from.slice(0, 200), reason: refused });
      return agent.rejectSignal('treeRequest', [refused]);
    }
    const answer: TreeAnswer = req.kind === 'admit' ? { kind: 'admit', id: req.id, result: admitHere(book, req.request) } : { kind: 'route', id: req.id, result: routeMessage(book, req.request) };
    try {
      await getExternalWorkflowHandle(req.from).signal(treeAnswerSignal, { ...answer, ...(book.token ? { token: book.token } : {}) });
    } catch (err) {
      if (isCancellation(err)) throw err;
      // The asker is gone: it will never start the child it asked for, so the admission (and its share) is taken back.
      log.info('treeAnswer not delivered', { agentId: agent.agentId, to: req.from.slice(0, 200) });
      if (req.kind === 'admit' && answer.kind === 'admit' && answer.result.ok) await deliver(agent, withdrawShare(book, req.request.agentId));
    }
  }));
}
