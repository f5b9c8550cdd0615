/**
 * autoDream for backend services and the CLI: run a consolidation (by hand or as a Schedule
 * would), read a scope's status (lock holder, recent runs and their outcomes), and manage its
 * Schedule. Also re-exports the away summary, so one line in the client index exports both.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import { validateDreamConfig, type DreamConfigInput } from '../shared/dream/config';
import { dreamLockId, dreamRunsQuery, manualDreamId } from '../shared/dream/names';
import type { DreamOutcome } from '../shared/dream/outcome';
import { FAILURE, isFailure, issuesOf } from '../shared/wire/failures';
import { SA } from '../shared/wire/search-attributes';
import { DreamSchedules, InvalidDreamConfigError } from './dream-schedule';
import { ForkflowError } from './errors';
import type { ForkRunner } from './runner';

export * from './dream-schedule';
export * from './away';
export type { DreamConfigInput } from '../shared/dream/config';
export type { DreamOutcome } from '../shared/dream/outcome';
export type { AwayEvent, AwayRequestInput, AwaySummary } from '../shared/dream/away';

type DreamWorkflowFn = (config: DreamConfigInput) => Promise<DreamOutcome>;

/** One autoDream run of a scope, as listed by `status`. */
export interface DreamRunRow {
  workflowId: string;
  runId: string;
  /** Temporal's status: RUNNING, COMPLETED, FAILED, ... */
  temporalStatus: string;
  startedAt: string;
  closedAt?: string;
  /** The outcome kind (from the run's memo, once it has ended). */
  outcome?: string;
  detail?: string;
}

export interface DreamStatus {
  scope: string;
  /** The consolidation fork holding the scope's lock, if one is running. */
  lock: { held: false; workflowId: string } | { held: true; workflowId: string; runId: string; startedAt: string };
  /** Newest first. */
  runs: DreamRunRow[];
}

/** A started run: its ids and, once, its outcome. */
export interface DreamRunHandle {
  workflowId: string;
  runId: string;
  result(): Promise<DreamOutcome>;
}

/**
 * autoDream's client API over a `ForkflowClient` (any `ForkRunner`).
 *
 * @example
 * const dream = new DreamClient(forkflow);
 * const outcome = await dream.run({ memoryScope: 'team', memoryDir: '/srv/memory/team', manual: true });
 * if (outcome.kind === 'completed') console.log(`${outcome.memoriesChanged} memories changed`);
 * await dream.schedules.create({ memoryScope: 'team', memoryDir: '/srv/memory/team' }, { every: '6h', jitter: '30m' });
 */
export class DreamClient {
  readonly schedules: DreamSchedules;

  constructor(readonly forkflow: ForkRunner) {
    this.schedules = new DreamSchedules(forkflow.temporal, forkflow.taskQueue);
  }

  /** Validates the config and starts one run (default id `dream-manual-<scope>-<random>`). */
  async start(config: DreamConfigInput, opts: { workflowId?: string; taskQueue?: string } = {}): Promise<DreamRunHandle> {
    const validated = validateDreamConfig(config);
    if (!validated.ok) throw new InvalidDreamConfigError(validated.issues);
    const scope = validated.value.memoryScope;
    const workflowId = opts.workflowId ?? manualDreamId(scope, randomUUID().slice(0, 8));
    const handle = await this.forkflow.temporal.workflow.start<DreamWorkflowFn>(WORKFLOW_TYPES.autoDream, {
      args: [config],
      taskQueue: opts.taskQueue ?? this.forkflow.taskQueue,
      workflowId,
      staticSummary: `autoDream${validated.value.manual ? ' (manual)' : ''}: consolidate memory scope ${scope}`,
      typedSearchAttributes: [{ key: SA.memoryScope, value: scope }],
    });
    return { workflowId, runId: handle.firstExecutionRunId, result: () => this.result(workflowId, handle.firstExecutionRunId) };
  }

  /** Starts a run and waits for its outcome. */
  async run(config: DreamConfigInput, opts: { workflowId?: string; taskQueue?: string } = {}): Promise<DreamOutcome> {
    return (await this.start(config, opts)).result();
  }

  /** The outcome of a run (waits while it runs). */
  async result(workflowId: string, runId?: string): Promise<DreamOutcome> {
    try {
      const handle = this.forkflow.temporal.workflow.getHandle<DreamWorkflowFn>(workflowId, runId);
      return await (this.forkflow.outage ? this.forkflow.outage.longPoll('dream result', () => handle.result()) : handle.result());
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new ForkflowError(`No autoDream run "${workflowId}": list a scope's runs with \`forkflow dream status --scope <scope>\`.`);
      if (err instanceof WorkflowFailedError && isFailure(err.cause, FAILURE.invalidDreamConfig)) throw new InvalidDreamConfigError(issuesOf(err.cause));
      if (err instanceof WorkflowFailedError) throw new ForkflowError(`autoDream run ${workflowId} did not complete: ${err.cause?.message ?? err.message}`);
      throw err;
    }
  }

  /** Who holds the scope's lock, and its recent runs with their outcomes. */
  status(scope: string, opts: { limit?: number } = {}): Promise<DreamStatus> {
    const read = () => this.readStatus(scope, opts);
    return this.forkflow.outage ? this.forkflow.outage.read('dream status', read) : read();
  }

  private async readStatus(scope: string, opts: { limit?: number }): Promise<DreamStatus> {
    const lockId = dreamLockId(scope);
    let lock: DreamStatus['lock'] = { held: false, workflowId: lockId };
    try {
      const d = await this.forkflow.temporal.workflow.getHandle(lockId).describe();
      if (d.status.name === 'RUNNING') lock = { held: true, workflowId: lockId, runId: d.runId, startedAt: d.startTime.toISOString() };
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    const runs: DreamRunRow[] = [];
    for await (const info of this.forkflow.temporal.workflow.list({ query: dreamRunsQuery(scope) })) {
      const memo = info.memo ?? {};
      runs.push({
        workflowId: info.workflowId,
        runId: info.runId,
        temporalStatus: info.status.name,
        startedAt: info.startTime.toISOString(),
        ...(info.closeTime ? { closedAt: info.closeTime.toISOString() } : {}),
        ...(typeof memo.dreamOutcome === 'string' ? { outcome: memo.dreamOutcome } : {}),
        ...(typeof memo.dreamDetail === 'string' ? { detail: memo.dreamDetail } : {}),
      });
      if (runs.length >= (opts.limit ?? 20)) break;
    }
    return { scope, lock, runs };
  }
}
