/**
 * Prompt Schedules: a Temporal Schedule per name that, on a cron or an interval, starts a
 * `scheduledPromptWorkflow` which signals one `sendMessage` to an existing agent (see
 * src/workflows/schedule/prompt-workflow.ts for what happens when the agent is closed).
 * Overlap SKIP and a catch-up window: after an outage at most one missed prompt is sent.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleDescription, type ScheduleHandle } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import { toMs } from '../shared/base/duration';
import { describeIssues } from '../shared/wire/fork-input-validation';
import { sendMessageSchema, type SendMessageArgs } from '../shared/wire/messages';
import { promptScheduleId, promptScheduleName, promptScheduleNameSchema, scheduledPromptRunId, type ScheduledPromptInput } from '../shared/wire/scheduled-prompt';
import { dreamScheduleSpecSchema, type DreamScheduleSpecInput } from './dream-schedule';
import { AgentNotFoundError, ForkflowError, InvalidInputError } from './errors';
import { resolveAgent } from './tree';

/** When a prompt Schedule fires: the same spec as autoDream's (one of `every` or `cron`, jitter, catch-up window, paused, note). */
export type PromptScheduleSpecInput = DreamScheduleSpecInput;

/** No prompt Schedule of that name. */
export class PromptScheduleNotFoundError extends ForkflowError {
  override name = 'PromptScheduleNotFoundError';
  constructor(readonly scheduleName: string) {
    super(`No prompt schedule "${scheduleName}": list them with \`forkflow schedule list\`.`);
  }
}

/** A prompt Schedule of that name exists already. */
export class PromptScheduleExistsError extends ForkflowError {
  override name = 'PromptScheduleExistsError';
  constructor(readonly scheduleName: string) {
    super(`A prompt schedule "${scheduleName}" exists already: pick another name (--name), or delete it first.`);
  }
}

/** What `describe` and `list` show. */
export interface PromptScheduleView {
  name: string;
  scheduleId: string;
  agentId?: string;
  message?: string;
  paused: boolean;
  note?: string;
  intervals: { everyMs: number; offsetMs: number }[];
  cron: string[];
  nextRunTimes: string[];
  /** The runs it started lately: each a `scheduledPromptWorkflow` whose result says whether the prompt was delivered. */
  recent: { scheduledAt: string; workflowId: string; runId: string }[];
  actionsTaken?: number;
}

function inputOf(args: readonly unknown[] | undefined): ScheduledPromptInput | undefined {
  return args?.[0] as ScheduledPromptInput | undefined;
}

function viewOf(name: string, d: ScheduleDescription): PromptScheduleView {
  const input = d.action.type === 'startWorkflow' ? inputOf(d.action.args) : undefined;
  return {
    name,
    scheduleId: d.scheduleId,
    ...(input ? { agentId: input.agentId, message: input.message.message } : {}),
    paused: d.state.paused,
    ...(d.state.note ? { note: d.state.note } : {}),
    intervals: (d.spec.intervals ?? []).map((i) => ({ everyMs: Number(i.every), offsetMs: Number(i.offset ?? 0) })),
    cron: Array.isArray(d.memo?.forkflowPromptCron) ? (d.memo.forkflowPromptCron as string[]) : [],
    nextRunTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
    recent: d.info.recentActions.map((a) => ({ scheduledAt: a.scheduledAt.toISOString(), workflowId: a.action.workflow.workflowId, runId: a.action.workflow.firstExecutionRunId })),
    actionsTaken: d.info.numActionsTaken,
  };
}

/** Prompt Schedules of one Temporal client and task queue (`ForkflowClient.schedules`). */
export class PromptSchedules {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  private async call<T>(name: string, fn: (h: ScheduleHandle) => Promise<T>): Promise<T> {
    try {
      return await fn(this.temporal.schedule.getHandle(promptScheduleId(name)));
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) throw new PromptScheduleNotFoundError(name);
      throw err;
    }
  }

  /**
   * Creates a Schedule that sends `message` to `agent` (an id, or a name resolved now to its
   * id) each time `spec` fires. The agent must exist; while it is closed, firings fail with
   * `AgentNotRunning` and send nothing.
   *
   * @example
   * await forkflow.schedules.create('standup', 'agent-7', { message: 'Post the standup summary.' }, { cron: ['0 9 * * 1-5'] });
   */
  async create(name: string, agent: string, message: SendMessageArgs, spec: PromptScheduleSpecInput, opts: { taskQueue?: string } = {}): Promise<PromptScheduleView> {
    const n = promptScheduleNameSchema.safeParse(name);
    const m = sendMessageSchema.omit({ fromTree: true }).safeParse(message);
    const s = dreamScheduleSpecSchema.safeParse(spec);
    if (!n.success || !m.success || !s.success) {
      throw new InvalidInputError('prompt schedule', [...(n.success ? [] : describeIssues(n.error)), ...(m.success ? [] : describeIssues(m.error)), ...(s.success ? [] : describeIssues(s.error))]);
    }
    const agentId = await resolveAgent(this.temporal, agent);
    try {
      await this.temporal.workflow.getHandle(agentId).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new AgentNotFoundError(agentId);
      throw err;
    }
    const input: ScheduledPromptInput = { v: 1, agentId, schedule: n.data, message: m.data };
    const sp = s.data;
    try {
      await this.temporal.schedule.create({
        scheduleId: promptScheduleId(n.data),
        spec: {
          ...(sp.every !== undefined ? { intervals: [{ every: toMs(sp.every), ...(sp.offset !== undefined ? { offset: toMs(sp.offset) } : {}) }] } : {}),
          ...(sp.cron ? { cronExpressions: sp.cron } : {}),
          ...(sp.jitter !== undefined ? { jitter: toMs(sp.jitter) } : {}),
        },
        action: {
          type: 'startWorkflow',
          workflowType: WORKFLOW_TYPES.scheduledPrompt,
          args: [input],
          taskQueue: opts.taskQueue ?? this.taskQueue,
          workflowId: scheduledPromptRunId(n.data),
          staticSummary: `scheduled prompt ${n.data} → ${agentId}`,
        },
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: toMs(sp.catchupWindow), pauseOnFailure: false },
        state: { paused: sp.paused, ...(sp.note ? { note: sp.note } : {}) },
        // The server keeps cron specs as calendars: the expressions as given are kept for `describe`.
        memo: { forkflowPromptAgent: agentId, ...(sp.cron ? { forkflowPromptCron: sp.cron } : {}) },
      });
    } catch (err) {
      if (err instanceof ScheduleAlreadyRunning) throw new PromptScheduleExistsError(n.data);
      throw err;
    }
    return this.describe(n.data);
  }

  describe(name: string): Promise<PromptScheduleView> {
    return this.call(name, async (h) => viewOf(name, await h.describe()));
  }

  /** Every prompt Schedule (optionally only those of one agent id). */
  async list(opts: { agentId?: string } = {}): Promise<PromptScheduleView[]> {
    const views: PromptScheduleView[] = [];
    for await (const summary of this.temporal.schedule.list()) {
      const name = promptScheduleName(summary.scheduleId);
      if (name === undefined) continue;
      let view: PromptScheduleView;
      try {
        view = await this.describe(name);
      } catch (err) {
        if (err instanceof PromptScheduleNotFoundError) continue; // deleted since it was listed
        throw err;
      }
      if (!opts.agentId || view.agentId === opts.agentId) views.push(view);
    }
    return views.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Sends the prompt now (one run; skipped while a previous run is still going). */
  trigger(name: string): Promise<void> {
    return this.call(name, (h) => h.trigger(ScheduleOverlapPolicy.SKIP));
  }

  /** Deletes the Schedule; prompts already sent stay sent. */
  delete(name: string): Promise<void> {
    return this.call(name, (h) => h.delete());
  }
}
