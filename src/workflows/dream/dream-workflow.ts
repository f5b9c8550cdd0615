/**
 * `autoDreamWorkflow`: one memory consolidation attempt for a memory scope, started by the
 * scope's Schedule (overlap SKIP) or by hand. Gates run cheapest first — enabled (no I/O),
 * time since the last consolidation and the scan throttle (one state-file read), sessions
 * since then (one visibility count) — then the lock and the fork (consolidate.ts). The result
 * is a `DreamOutcome`; only an invalid configuration fails the workflow.
 */
import { ActivityFailure, ApplicationFailure, CancellationScope, CancelledFailure, isCancellation, patched, setCurrentDetails, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_FORK_TIMEOUT, validateDreamConfig, type DreamConfig, type DreamConfigInput } from '../../shared/dream/config';
import { enabledGate, sessionsGate, throttleGate, timeGate, type GateSkip } from '../../shared/dream/gates';
import type { DreamOutcome, DreamRunInfo } from '../../shared/dream/outcome';
import type { DreamStateView } from '../../shared/dream/state';
import { FAILURE, invalid as invalidFailure } from '../../shared/wire/failures';
import { SA } from '../../shared/wire/search-attributes';
import { workflowNow } from '../clock';
import { dreamFiles, dreamTemporal } from './activities';
import { consolidate } from './consolidate';

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function invalid(issues: string[]): ApplicationFailure {
  return invalidFailure(FAILURE.invalidDreamConfig, 'Invalid autoDreamWorkflow config', issues);
}

/** Runs started without the scope attribute (`temporal workflow start`) still show up under their scope. */
function publishScope(scope: string): void {
  if (workflowInfo().typedSearchAttributes.get(SA.memoryScope) !== scope) upsertSearchAttributes([{ key: SA.memoryScope, value: scope }]);
}

/** The outcome where operators look: the memo (listed with the run) and the Web UI's current details. */
function publishOutcome(o: DreamOutcome): void {
  const detail = 'reason' in o ? o.reason : 'error' in o ? o.error : `${o.memoriesChanged} memories changed`;
  upsertMemo({ dreamOutcome: o.kind, dreamDetail: detail.slice(0, 500) });
  setCurrentDetails(`**autoDream ${o.scope}** · ${o.kind}${o.kind === 'skipped' ? ` (${o.gate})` : ''}\n\n${detail}`);
}

/** An activity's business failure that means the configuration cannot work (not worth an `errored`). */
function configProblem(err: unknown): ApplicationFailure | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FAILURE.invalidDreamConfig) return invalid([err.cause.message]);
  return undefined;
}

function skipped(run: DreamRunInfo, skip: GateSkip): DreamOutcome {
  return { ...run, kind: 'skipped', ...skip };
}

/** Either the gates stopped the run, or it may go on to the lock with the state it loaded. */
type GateResult = { stop: DreamOutcome } | { go: DreamStateView };

async function runGates(cfg: DreamConfig, now: number, run: DreamRunInfo, filesQueue: string): Promise<GateResult> {
  const view = await dreamFiles.dreamLoadState.executeWithOptions({ taskQueue: filesQueue, summary: 'load the dream state' }, [
    { scope: cfg.memoryScope, memoryDir: cfg.memoryDir, stateDir: cfg.stateDir, workspaceRoot: cfg.workspace?.root },
  ]);
  if (cfg.manual) return { go: view };
  const last = view.state.lastConsolidatedAt;
  const cheap = timeGate(cfg, now, last) ?? throttleGate(cfg, now, view.state.lastScanAt);
  if (cheap) return { stop: skipped(run, cheap) };
  await dreamFiles.dreamRecordScan.executeWithOptions({ taskQueue: filesQueue, summary: 'record the session scan' }, [{ stateDir: view.stateDir, scope: cfg.memoryScope, at: run.at }]);
  const sessions = await dreamTemporal.dreamCountSessions.executeWithOptions({ summary: 'count sessions' }, [{ scope: cfg.memoryScope, since: last, until: run.at }]);
  const few = sessionsGate(cfg, sessions, last);
  return few ? { stop: skipped(run, few) } : { go: view };
}

/** Runs that left `delivery` unsaid became batched (with a 24h fork timeout) from this patch on. */
export const DREAM_BATCH_DEFAULT_PATCH = 'forkflow-dream-batch-default';

/**
 * The configuration as this run reads it. A run recorded before batching became the default
 * read an unsaid `delivery` as interactive, with the 15m fork timeout: it replays so.
 */
function asRecorded(raw: DreamConfigInput, cfg: DreamConfig): DreamConfig {
  if (raw.delivery !== undefined || patched(DREAM_BATCH_DEFAULT_PATCH)) return cfg;
  return { ...cfg, delivery: 'interactive', forkTimeout: raw.forkTimeout ?? DEFAULT_FORK_TIMEOUT };
}

/**
 * Consolidates a scope's memory when its gates allow (see SEMANTICS.md, "autoDream").
 *
 * @example
 * // From a client: one manual run that skips the time and session gates.
 * await client.workflow.execute('autoDreamWorkflow', { taskQueue: 'forkflow', workflowId: 'dream-manual-team-1',
 *   args: [{ memoryScope: 'team', memoryDir: '/srv/memory/team', manual: true }] });
 */
export async function autoDreamWorkflow(raw: DreamConfigInput): Promise<DreamOutcome> {
  const validated = validateDreamConfig(raw);
  if (!validated.ok) throw invalid(validated.issues);
  const cfg = asRecorded(raw, validated.value);
  publishScope(cfg.memoryScope);
  const now = cfg.now ? Date.parse(cfg.now) : workflowNow();
  const run: DreamRunInfo = { scope: cfg.memoryScope, manual: cfg.manual, at: iso(now) };
  const filesQueue = cfg.workspace?.taskQueue ?? workflowInfo().taskQueue;

  let outcome: DreamOutcome;
  const disabled = enabledGate(cfg);
  if (disabled) {
    outcome = skipped(run, disabled);
  } else {
    try {
      const gated = await runGates(cfg, now, run, filesQueue);
      outcome = 'stop' in gated ? gated.stop : await consolidate({ cfg, now, run, view: gated.go, filesQueue });
    } catch (err) {
      if (isCancellation(err)) throw err;
      const problem = configProblem(err);
      if (problem) throw problem;
      if (!(err instanceof ActivityFailure)) throw err;
      // Nothing was claimed yet (consolidate settles its own failures): the state is as it was.
      const error = err.cause?.message ?? err.message;
      outcome = { ...run, kind: 'errored', error, rolledBack: false, sessionsReviewed: 0, changes: { created: [], updated: [], removed: [] } };
    }
  }
  publishOutcome(outcome);
  // The fork ends a cancelled tree with a normal "killed" result; the run itself still reports CANCELLED, after the rollback above.
  if (CancellationScope.current().consideredCancelled) throw new CancelledFailure(`autoDream of scope ${cfg.memoryScope} was cancelled (${outcome.kind}; time rolled back: ${'rolledBack' in outcome ? String(outcome.rolledBack) : 'n/a'})`);
  return outcome;
}
