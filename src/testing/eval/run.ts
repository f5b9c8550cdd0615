/**
 * Running an eval: every case is a sync fork from a point of a recorded agent (by reference:
 * nothing of the agent's conversation is copied), at most `concurrency` at a time, each with a
 * token budget of its own reserved from the run's budget before it starts — so the run never
 * starts more than its budget can pay for, and stops at the first case that does not fit. All
 * points are resolved first: a spec naming an unknown agent or a turn past an agent's end fails
 * before any case runs.
 */
import { randomUUID } from 'node:crypto';
import type { ForkflowClient, ForkResult } from '../../client';
import { InvalidInputError } from '../../client';
import { inheritedBy, runsAs, startFrom } from '../../client/time-travel';
import { tokensCharged } from '../../shared/tree/budget';
import { estimateCostUsd } from '../../shared/providers/pricing';
import { usageSince, type TurnPoint } from '../../shared/prefix/time-travel';
import type { Usage } from '../../shared/messages-api/anthropic';
import { evalSpecSchema, type EvalCase, type EvalSpec, type EvalSpecInput } from './spec';
import { tokensOf, totalTokens, type CaseOutcome, type CaseReport, type EvalReport, type OriginalContinuation } from './report';

/** What the original agent had done when the run began: where it stands, and what it said last. */
interface AgentEnd {
  state: string;
  turns: number;
  toolUses: number;
  usage: Usage;
  model: string;
  text?: string;
}

async function agentEnd(client: ForkflowClient, agentId: string): Promise<AgentEnd> {
  const running = (await client.temporal.workflow.getHandle(agentId).describe()).status.name === 'RUNNING';
  if (!running) {
    const r = await client.result(agentId).catch(() => undefined);
    if (r) return { state: r.stopReason === 'budget_exhausted' || r.stopReason === 'max_turns' ? r.stopReason : r.status, turns: r.turns, toolUses: r.toolUses, usage: r.usage, model: r.model ?? '', ...(r.text ? { text: r.text } : {}) };
  }
  const s = await client.status(agentId);
  return { state: s.state, turns: s.turns, toolUses: s.toolUses, usage: s.usage, model: s.model, ...(s.lastText ? { text: s.lastText } : {}) };
}

function continuationAfter(point: TurnPoint, end: AgentEnd): OriginalContinuation {
  const usage = usageSince(end.usage, point.usage);
  return {
    state: end.state,
    turns: Math.max(0, end.turns - point.turn),
    toolUses: Math.max(0, end.toolUses - point.toolUses),
    tokens: tokensOf(usage),
    costUsd: estimateCostUsd(end.model, usage),
    ...(end.text && end.turns > point.turn ? { text: end.text } : {}),
  };
}

const pointKey = (c: EvalCase) => JSON.stringify([c.agentId, c.atTurn ?? null, c.runId ?? null]);

function outcomeOf(r: ForkResult): CaseOutcome {
  if (r.status !== 'completed') return r.status;
  if (r.stopReason === 'budget_exhausted' || r.stopReason === 'max_turns') return r.stopReason;
  return 'completed';
}

const ZERO_TOKENS = { uncached: 0, cacheRead: 0, cacheWrite: 0, output: 0 };

function notRun(c: EvalCase, outcome: 'not_run' | 'error', error?: string): CaseReport {
  return { id: c.id, from: { agentId: c.agentId, ...(c.atTurn !== undefined ? { turn: c.atTurn } : {}) }, kind: c.prompt ? 'prompt' : 'replay', outcome, turns: 0, toolUses: 0, tokens: ZERO_TOKENS, charged: 0, costUsd: 0, ...(error ? { error } : {}) };
}

async function runCase(client: ForkflowClient, spec: EvalSpec, c: EvalCase, point: TurnPoint, original: OriginalContinuation, budget: number): Promise<CaseReport> {
  const forkId = `eval-${spec.name}-${c.id}-${randomUUID().slice(0, 8)}`;
  const counterfactual = c.system !== undefined || c.tools !== undefined || c.model !== undefined || c.thinking !== undefined;
  const base: CaseReport = { ...notRun(c, 'error'), from: { agentId: point.agentId, runId: point.runId, turn: point.turn }, forkId, original };
  let result: ForkResult;
  try {
    const handle = await client.start(
      {
        // At the agent's effort, unless the case names another model (which may not take it).
        ...inheritedBy(c, await runsAs(client.temporal, point)),
        agentId: forkId,
        parentAgentId: c.agentId,
        forkLabel: `eval:${spec.name}`,
        prompt: c.prompt ?? `replay of ${c.agentId} from turn ${point.turn} (eval ${spec.name}, case ${c.id})`,
        ...(c.prompt ? {} : { replay: true }),
        ...(counterfactual ? { counterfactual: true } : {}),
        ...(c.system !== undefined ? { system: c.system } : {}),
        ...(c.tools !== undefined ? { tools: c.tools } : {}),
        ...(c.model !== undefined ? { model: c.model } : {}),
        ...(c.thinking !== undefined ? { thinking: c.thinking } : {}),
        maxTurns: c.maxTurns ?? spec.maxTurns,
        budget: { maxTokens: budget },
        mode: 'sync',
        ...startFrom(point),
      },
      spec.taskQueue ? { taskQueue: spec.taskQueue } : {},
    );
    result = await handle.result();
  } catch (err) {
    return { ...base, error: err instanceof Error ? err.message : String(err) };
  }
  const tokens = tokensOf(result.usage);
  const costUsd = estimateCostUsd(result.model ?? '', result.usage);
  return {
    ...base,
    outcome: outcomeOf(result),
    stopReason: result.stopReason,
    turns: result.turns,
    toolUses: result.toolUses,
    tokens,
    charged: tokensCharged(result.usage),
    costUsd,
    ...(result.text ? { text: result.text } : {}),
    ...(result.error ? { error: result.error } : {}),
    ...(result.counterfactual ? { changed: result.counterfactual.changed } : {}),
    ...(result.cacheBreak ? { cacheBreak: result.cacheBreak.reason } : {}),
    diff: {
      turns: result.turns - original.turns,
      toolUses: result.toolUses - original.toolUses,
      tokens: totalTokens(tokens) - totalTokens(original.tokens),
      costUsd: Math.round((costUsd - original.costUsd) * 1_000_000) / 1_000_000,
      sameText: (result.text ?? '') === (original.text ?? ''),
    },
  };
}

/** Resolves every case's point and each agent's end, or throws listing every case that cannot run. */
async function resolvePoints(client: ForkflowClient, cases: EvalCase[]): Promise<{ points: Map<string, TurnPoint>; ends: Map<string, AgentEnd> }> {
  const points = new Map<string, TurnPoint>();
  const ends = new Map<string, AgentEnd>();
  const problems: string[] = [];
  for (const c of cases) {
    const key = pointKey(c);
    if (points.has(key)) continue;
    try {
      points.set(key, await client.turnPoint(c.agentId, { ...(c.atTurn !== undefined ? { atTurn: c.atTurn } : {}), ...(c.runId ? { runId: c.runId } : {}) }));
      if (!ends.has(c.agentId)) ends.set(c.agentId, await agentEnd(client, c.agentId));
    } catch (err) {
      problems.push(`case ${c.id}: ${err instanceof Error ? err.message.replace(/^Invalid fork point:\n- /, '') : String(err)}`);
    }
  }
  if (problems.length > 0) throw new InvalidInputError('eval spec (nothing was run)', problems);
  return { points, ends };
}

/**
 * Runs an eval (see ./spec.ts) and reports on every case. Cases start in the spec's order, at
 * most `concurrency` at once; each reserves its token budget from the run's before it starts,
 * and gives back what it did not charge when it ends. When the next case's budget does not fit
 * in what is left once nothing else runs, the run stops: that case and the rest are `not_run`.
 *
 * @throws InvalidInputError when the spec is invalid or names points that cannot be had (nothing runs).
 */
export async function runEval(client: ForkflowClient, input: EvalSpecInput, opts: { onCase?: (c: CaseReport) => void } = {}): Promise<EvalReport> {
  const parsed = evalSpecSchema.safeParse(input);
  if (!parsed.success) throw new InvalidInputError('eval spec', parsed.error.issues.map((i) => `${i.path.join('.') || '(spec)'}: ${i.message}`));
  const spec = parsed.data;
  const started = Date.now();
  const { points, ends } = await resolvePoints(client, spec.cases);

  const reports = new Map<string, CaseReport>();
  const running = new Set<Promise<void>>();
  let reserved = 0;
  let charged = 0;
  let stoppedAt: string | undefined;
  const left = () => spec.budget.maxTokens - charged - reserved;
  for (const c of spec.cases) {
    const need = c.maxTokens ?? spec.caseBudget;
    // Wait for room: a free slot, and (while others run and may give some back) the budget.
    while (running.size >= spec.concurrency || (left() < need && running.size > 0)) await Promise.race(running);
    if (left() < need) {
      stoppedAt = c.id;
      break;
    }
    reserved += need;
    const point = points.get(pointKey(c))!;
    const job: Promise<void> = runCase(client, spec, c, point, continuationAfter(point, ends.get(c.agentId)!), need).then((report) => {
      running.delete(job);
      reserved -= need;
      charged += report.charged;
      reports.set(c.id, report);
      opts.onCase?.(report);
    });
    running.add(job);
  }
  await Promise.all(running);

  const cases = spec.cases.map((c) => reports.get(c.id) ?? notRun(c, 'not_run'));
  const ran = cases.filter((c) => c.outcome !== 'not_run' && c.outcome !== 'error');
  const sum = (f: (c: CaseReport) => number) => ran.reduce((n, c) => n + f(c), 0);
  return {
    name: spec.name,
    cases,
    totals: {
      cases: cases.length,
      ran: ran.length,
      notRun: cases.filter((c) => c.outcome === 'not_run').length,
      completed: ran.filter((c) => c.outcome === 'completed').length,
      failed: ran.filter((c) => c.outcome === 'failed' || c.outcome === 'killed' || c.outcome === 'timeout').length,
      errors: cases.filter((c) => c.outcome === 'error').length,
      turns: sum((c) => c.turns),
      toolUses: sum((c) => c.toolUses),
      tokens: { uncached: sum((c) => c.tokens.uncached), cacheRead: sum((c) => c.tokens.cacheRead), cacheWrite: sum((c) => c.tokens.cacheWrite), output: sum((c) => c.tokens.output) },
      costUsd: Math.round(sum((c) => c.costUsd) * 1_000_000) / 1_000_000,
    },
    budget: { maxTokens: spec.budget.maxTokens, charged, left: Math.max(0, spec.budget.maxTokens - charged), ...(stoppedAt ? { stoppedAt } : {}) },
    concurrency: spec.concurrency,
    durationMs: Date.now() - started,
  };
}
