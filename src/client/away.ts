/**
 * The away summary, client side: decide from the clock and visibility alone whether there is
 * anything to tell a returning user (no model call when there is not), then let a read-only
 * fork write the digest of the newest `maxEvents` agent runs of the scope.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { awayPrompt, awayRequestSchema, type AwayEvent, type AwayRequestInput, type AwaySummary } from '../shared/dream/away';
import { AWAY_FORK_LABEL, AWAY_QUERY_SOURCE, scopeEventsQuery } from '../shared/dream/names';
import { forkResultOf } from '../shared/wire/failures';
import { describeIssues } from '../shared/wire/fork-input-validation';
import { statusQuery } from '../shared/wire/messages';
import { SA } from '../shared/wire/search-attributes';
import type { ForkResult } from '../shared/wire/status';
import { InvalidInputError } from './errors';
import type { ForkRunner } from './runner';

/** The away request failed validation. */
export class InvalidAwayRequestError extends InvalidInputError {
  override name = 'InvalidAwayRequestError';
  constructor(issues: string[]) {
    super('away-summary request', issues);
  }
}

const HOUR_MS = 3_600_000;
/** Visibility rows read at most; the newest maxEvents of them are summarised. */
const LIST_CAP = 2_000;
/** Result and status look-ups of the kept events run this many at a time. */
const LOOKUP_CONCURRENCY = 8;

function eventOf(info: WorkflowExecutionInfo): AwayEvent {
  const sa = info.typedSearchAttributes;
  const state = sa.get(SA.state);
  return {
    at: (info.closeTime ?? info.startTime).toISOString(),
    // A closed run whose state never left `running` was terminated or timed out by the server: Temporal's word is better.
    status: info.closeTime && (!state || state === 'running') ? info.status.name.toLowerCase() : (state ?? info.status.name.toLowerCase()),
    agentId: sa.get(SA.agentId) ?? info.workflowId,
    workflowId: info.workflowId,
    runId: info.runId,
    label: sa.get(SA.label),
    turns: sa.get(SA.turns),
    totalTokens: sa.get(SA.totalTokens),
  };
}

/** A look-up that takes longer than this (a running run whose worker is gone) is left out. */
const LOOKUP_TIMEOUT_MS = 10_000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Adds what the run said last: its result (closed) or its status (running). Failures leave the event as it was. */
async function enrich(client: Client, e: AwayEvent, running: boolean): Promise<AwayEvent> {
  const handle = client.workflow.getHandle(e.workflowId, e.runId);
  try {
    if (running) {
      const s = await withTimeout(handle.query(statusQuery), LOOKUP_TIMEOUT_MS);
      return { ...e, turns: s.turns, ...(s.lastText ? { text: s.lastText.slice(0, 1000) } : {}), ...(s.error ? { error: s.error } : {}) };
    }
    const r = (await withTimeout(handle.result(), LOOKUP_TIMEOUT_MS)) as ForkResult;
    return { ...e, turns: r.turns, text: r.text.slice(0, 1000), ...(r.error ? { error: r.error } : {}) };
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      const cause = err.cause;
      const failed = forkResultOf(cause);
      return { ...e, error: failed?.error ?? cause?.message ?? err.message };
    }
    return e;
  }
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The scope's events since `since`, newest first: the kept ones (≤ max) and how many there were. */
async function collectEvents(client: Client, scope: string, since: string, max: number): Promise<{ events: AwayEvent[]; total: number }> {
  const rows: { event: AwayEvent; running: boolean }[] = [];
  for await (const info of client.workflow.list({ query: scopeEventsQuery(scope, since) })) {
    rows.push({ event: eventOf(info), running: !info.closeTime });
    if (rows.length >= LIST_CAP) break;
  }
  rows.sort((a, b) => b.event.at.localeCompare(a.event.at));
  const kept = rows.slice(0, max);
  const events = await mapLimited(kept, LOOKUP_CONCURRENCY, (r) => enrich(client, r.event, r.running));
  return { events, total: rows.length };
}

/**
 * The away summary for a user returning to a memory scope. Below the threshold, or with no
 * agent run closed since `since` and none running, it answers `nothing_to_summarise`
 * without any model call; otherwise a read-only fork digests the newest `maxEvents` events.
 *
 * @example
 * const away = await awaySummary(forkflow, { memoryScope: 'team', since: lastSeen.toISOString() });
 * if (away.kind === 'summary') show(away.digest);
 */
export async function awaySummary(forkflow: ForkRunner, request: AwayRequestInput, opts: { taskQueue?: string } = {}): Promise<AwaySummary> {
  const parsed = awayRequestSchema.safeParse(request);
  if (!parsed.success) throw new InvalidAwayRequestError(describeIssues(parsed.error));
  const req = parsed.data;
  const nowMs = req.now ? Date.parse(req.now) : Date.now();
  const now = new Date(nowMs).toISOString();
  const since = new Date(Date.parse(req.since)).toISOString();
  const awayHours = Math.round(((nowMs - Date.parse(since)) / HOUR_MS) * 100) / 100;
  const when = { awayHours, since, now };
  if (awayHours < req.thresholdHours) {
    return { kind: 'nothing_to_summarise', reason: 'below_threshold', message: `Away ${awayHours} h, less than the ${req.thresholdHours} h threshold: nothing to summarise.`, ...when };
  }
  const { events, total } = await collectEvents(forkflow.temporal, req.memoryScope, since, req.maxEvents);
  if (total === 0) {
    return { kind: 'nothing_to_summarise', reason: 'no_events', message: `No agent runs in scope ${req.memoryScope} since ${since}: nothing to summarise.`, ...when };
  }
  const counts = { events, totalEvents: total, omittedEvents: total - events.length };
  const prompt = awayPrompt({ scope: req.memoryScope, since, now, awayHours, events, totalEvents: total, extraInstructions: req.extraInstructions });
  const result = await forkflow.fork(
    {
      agentId: `away-${req.memoryScope}-${randomUUID().slice(0, 8)}`,
      prompt,
      forkLabel: AWAY_FORK_LABEL,
      querySource: AWAY_QUERY_SOURCE,
      toolFilter: 'readOnly',
      maxTurns: 4,
      timeout: req.timeout,
      ...(req.model ? { model: req.model } : {}),
      ...(req.delivery === 'batch' ? { delivery: 'batch' as const } : {}),
    },
    { mode: 'sync', ...(opts.taskQueue ? { taskQueue: opts.taskQueue } : {}) },
  );
  if (result.status !== 'completed') {
    return { kind: 'summary_failed', error: result.error ?? `the digest fork ended ${result.status}`, ...counts, ...when, fork: { agentId: result.agentId, status: result.status } };
  }
  return {
    kind: 'summary',
    digest: result.text,
    ...counts,
    ...when,
    fork: { agentId: result.agentId, status: result.status, turns: result.turns, outputTokens: result.usage.outputTokens },
  };
}
