/**
 * The approvals part of an agent's state: the tool calls waiting for a decision, and the last
 * few that stopped waiting undecided (expired, or their turn interrupted), so that a decision
 * arriving after them is queued to the agent rather than refused (seed 001's orphaned
 * permission response). This class is its only writer (approvals.ts drives it); the status and
 * continue-as-new read it through `length` and `pending()`. Never carried: a run continues as
 * new only with none open, and a late decision after that is refused as unknown.
 */
import type { PendingApproval } from '../../shared/tree/tree-input';

type Decision = NonNullable<PendingApproval['decision']>;

/** Requests that stopped waiting undecided, kept for a late decision (the oldest goes first). */
const LAPSED_KEPT = 32;

export class ApprovalBook {
  private readonly open: PendingApproval[] = [];
  private readonly lapsedRequests: PendingApproval[] = [];

  /** Requests on the book, decided or not (a decided one stays until the agent acted on it). */
  get length(): number {
    return this.open.length;
  }

  /** Requests still waiting for a decision (read-only view). */
  pending(): readonly PendingApproval[] {
    return this.open.filter((a) => !a.decision);
  }

  find(requestId: string): PendingApproval | undefined {
    return this.open.find((a) => a.requestId === requestId && !a.decision);
  }

  request(entry: PendingApproval): PendingApproval {
    this.open.push(entry);
    return entry;
  }

  decide(request: PendingApproval, decision: Decision): void {
    request.decision = decision;
  }

  /** The agent acted on the request (decided or expired): off the book. */
  close(request: PendingApproval): void {
    request.consumed = true;
    this.open.splice(this.open.indexOf(request), 1);
    if (request.decision) return;
    this.lapsedRequests.push(request);
    if (this.lapsedRequests.length > LAPSED_KEPT) this.lapsedRequests.shift();
  }

  /** A request that stopped waiting undecided and has had no late decision yet. */
  lapsed(requestId: string): PendingApproval | undefined {
    return this.lapsedRequests.find((a) => a.requestId === requestId && !a.decision);
  }
}
