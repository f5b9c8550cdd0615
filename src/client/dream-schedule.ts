/**
 * A memory scope's consolidation Schedule: one Temporal Schedule per scope starting
 * `autoDreamWorkflow` on an interval or cron spec, with overlap SKIP (a run that finds the
 * previous one still going is skipped, never queued), a catch-up window and jitter.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleDescription, type ScheduleHandle } from '@temporalio/client';
import { z } from 'zod';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import { dreamConfigSchema, type DreamConfigInput } from '../shared/dream/config';
import { dreamScheduleId, scheduledDreamId } from '../shared/dream/names';
import { durationSchema, toMs } from '../shared/base/duration';
import { describeIssues } from '../shared/wire/fork-input-validation';
import { SA } from '../shared/wire/search-attributes';
import { ForkflowError, InvalidInputError } from './errors';

/** The configuration or the schedule spec failed validation. */
export class InvalidDreamConfigError extends InvalidInputError {
  override name = 'InvalidDreamConfigError';
  constructor(issues: string[]) {
    super('autoDream configuration', issues);
  }
}

/** No Schedule for this scope. */
export class DreamScheduleNotFoundError extends ForkflowError {
  override name = 'DreamScheduleNotFoundError';
  constructor(readonly scope: string) {
    super(`No consolidation schedule for memory scope "${scope}": create one with \`forkflow dream schedule create --scope ${scope} ...\`.`);
  }
}

/** The scope already has a Schedule. */
export class DreamScheduleExistsError extends ForkflowError {
  override name = 'DreamScheduleExistsError';
  constructor(readonly scope: string) {
    super(`Memory scope "${scope}" already has a consolidation schedule: inspect it with \`forkflow dream schedule describe --scope ${scope}\`, or delete it first.`);
  }
}

export const dreamScheduleSpecSchema = z
  .strictObject({
    /** Run every this long (aligned to the epoch, plus `offset`). */
    every: durationSchema.optional(),
    offset: durationSchema.optional(),
    /** Cron expressions (UTC unless prefixed with `CRON_TZ=`). */
    cron: z.array(z.string().min(1)).min(1).optional(),
    /** Each run is delayed by a random amount up to this (spreads many scopes' runs). */
    jitter: durationSchema.optional(),
    /** After an outage, runs missed by no more than this are still taken (one at most: overlap SKIP). */
    catchupWindow: durationSchema.default('10m'),
    paused: z.boolean().default(false),
    note: z.string().max(1000).optional(),
  })
  .refine((s) => (s.every === undefined) !== (s.cron === undefined), { message: 'give exactly one of every (an interval) or cron' })
  .refine((s) => s.offset === undefined || s.every !== undefined, { message: 'offset applies to an interval (every)', path: ['offset'] });
export type DreamScheduleSpecInput = z.input<typeof dreamScheduleSpecSchema>;

/** A Schedule's config may not pin `now`: every run must see its own time. */
const scheduledConfigSchema = dreamConfigSchema.refine((c) => c.now === undefined, { message: 'a scheduled run must use its own clock: remove now', path: ['now'] });

/** What `describeSchedule` shows. */
export interface DreamScheduleView {
  scheduleId: string;
  scope: string;
  paused: boolean;
  note?: string;
  overlap: string;
  catchupWindowMs: number;
  jitterMs?: number;
  intervals: { everyMs: number; offsetMs: number }[];
  /** Cron specs as the server keeps them (calendar form). */
  calendars: unknown[];
  nextRunTimes: string[];
  running: { workflowId: string; runId: string }[];
  recent: { scheduledAt: string; takenAt: string; workflowId: string; runId: string }[];
  actionsTaken: number;
  skippedOverlap: number;
  missedCatchupWindow: number;
  config?: DreamConfigInput;
}

function viewOf(scope: string, d: ScheduleDescription): DreamScheduleView {
  const action = d.action.type === 'startWorkflow' ? d.action : undefined;
  return {
    scheduleId: d.scheduleId,
    scope,
    paused: d.state.paused,
    ...(d.state.note ? { note: d.state.note } : {}),
    overlap: d.policies.overlap ?? 'unspecified',
    catchupWindowMs: d.policies.catchupWindow,
    ...(d.spec.jitter !== undefined ? { jitterMs: d.spec.jitter } : {}),
    intervals: (d.spec.intervals ?? []).map((i) => ({ everyMs: Number(i.every), offsetMs: Number(i.offset ?? 0) })),
    calendars: d.spec.calendars ?? [],
    nextRunTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
    running: d.info.runningActions.map((a) => ({ workflowId: a.workflow.workflowId, runId: a.workflow.firstExecutionRunId })),
    recent: d.info.recentActions.map((a) => ({
      scheduledAt: a.scheduledAt.toISOString(),
      takenAt: a.takenAt.toISOString(),
      workflowId: a.action.workflow.workflowId,
      runId: a.action.workflow.firstExecutionRunId,
    })),
    actionsTaken: d.info.numActionsTaken,
    skippedOverlap: d.info.numActionsSkippedOverlap,
    missedCatchupWindow: d.info.numActionsMissedCatchupWindow,
    ...(action?.args?.[0] ? { config: action.args[0] as DreamConfigInput } : {}),
  };
}

/** Schedule operations for one Temporal client and task queue (used through `DreamClient`). */
export class DreamSchedules {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  private handle(scope: string): ScheduleHandle {
    return this.temporal.schedule.getHandle(dreamScheduleId(scope));
  }

  private async call<T>(scope: string, fn: (h: ScheduleHandle) => Promise<T>): Promise<T> {
    try {
      return await fn(this.handle(scope));
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) throw new DreamScheduleNotFoundError(scope);
      throw err;
    }
  }

  /** Creates the scope's Schedule; the config is validated now and again by every run. */
  async create(config: DreamConfigInput, spec: DreamScheduleSpecInput, opts: { taskQueue?: string } = {}): Promise<DreamScheduleView> {
    const cfg = scheduledConfigSchema.safeParse(config);
    const sp = dreamScheduleSpecSchema.safeParse(spec);
    if (!cfg.success || !sp.success) throw new InvalidDreamConfigError([...(cfg.success ? [] : describeIssues(cfg.error)), ...(sp.success ? [] : describeIssues(sp.error))]);
    const scope = cfg.data.memoryScope;
    const s = sp.data;
    try {
      await this.temporal.schedule.create({
        scheduleId: dreamScheduleId(scope),
        spec: {
          ...(s.every !== undefined ? { intervals: [{ every: toMs(s.every), ...(s.offset !== undefined ? { offset: toMs(s.offset) } : {}) }] } : {}),
          ...(s.cron ? { cronExpressions: s.cron } : {}),
          ...(s.jitter !== undefined ? { jitter: toMs(s.jitter) } : {}),
        },
        action: {
          type: 'startWorkflow',
          workflowType: WORKFLOW_TYPES.autoDream,
          args: [config],
          taskQueue: opts.taskQueue ?? this.taskQueue,
          workflowId: scheduledDreamId(scope),
          typedSearchAttributes: [{ key: SA.memoryScope, value: scope }],
          staticSummary: `autoDream: consolidate memory scope ${scope}`,
        },
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: toMs(s.catchupWindow), pauseOnFailure: false },
        state: { paused: s.paused, ...(s.note ? { note: s.note } : {}) },
        memo: { forkflowDreamScope: scope },
      });
    } catch (err) {
      if (err instanceof ScheduleAlreadyRunning) throw new DreamScheduleExistsError(scope);
      throw err;
    }
    return this.describe(scope);
  }

  describe(scope: string): Promise<DreamScheduleView> {
    return this.call(scope, async (h) => viewOf(scope, await h.describe()));
  }

  pause(scope: string, note?: string): Promise<void> {
    return this.call(scope, (h) => h.pause(note ?? 'paused with forkflow'));
  }

  unpause(scope: string, note?: string): Promise<void> {
    return this.call(scope, (h) => h.unpause(note ?? 'unpaused with forkflow'));
  }

  /**
   * Runs it now, unless a run is still going (overlap SKIP). The SDK's own `trigger()`
   * defaults to ALLOW_ALL, which would start a second run beside the first.
   */
  trigger(scope: string): Promise<void> {
    return this.call(scope, (h) => h.trigger(ScheduleOverlapPolicy.SKIP));
  }

  delete(scope: string): Promise<void> {
    return this.call(scope, (h) => h.delete());
  }
}
