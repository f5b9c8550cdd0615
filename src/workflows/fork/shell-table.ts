/**
 * The background shell tasks part of an agent's state: its tasks on record (running ones and
 * the newest finished ones), the counter their ids are numbered by, and the live watch of each
 * running one. This class is its only writer — shell-tasks.ts drives it; everything else reads
 * `all`, `running` and `find`. Records are plain JSON and cross continue-as-new; watches do not
 * (a new run starts its own).
 */
import type { CancellationScope } from '@temporalio/workflow';
import { SHELL_TASK_LIMITS, type ShellEnding, type ShellTaskRecord } from '../../shared/tools/shell-tasks';

/** The live watch of a running task (rebuilt by replay, never carried). */
export interface ShellWatch {
  scope: CancellationScope;
  done: Promise<void>;
}

export class ShellTable {
  private records: ShellTaskRecord[] = [];
  private counter = 0;
  private readonly watches = new Map<string, ShellWatch>();
  /**
   * The scope watches run under: the workflow's root (set at its start), so that cancelling a
   * tool round or a turn never silently ends the watch of a task that goes on running.
   */
  home?: CancellationScope;

  get all(): readonly ShellTaskRecord[] {
    return this.records;
  }

  get running(): ShellTaskRecord[] {
    return this.records.filter((r) => r.state === 'running');
  }

  /** How many tasks were ever started (carried, so ids stay unique across runs). */
  get started(): number {
    return this.counter;
  }

  find(taskId: string): ShellTaskRecord | undefined {
    return this.records.find((r) => r.taskId === taskId);
  }

  /** The task whose output file is `path`, if it is one of this agent's. */
  byOutputFile(path: string): ShellTaskRecord | undefined {
    return this.records.find((r) => r.outputFile === path);
  }

  /** Numbers the next task. */
  next(): number {
    this.counter += 1;
    return this.counter;
  }

  add(record: ShellTaskRecord): void {
    this.records.push(record);
  }

  watch(taskId: string): ShellWatch | undefined {
    return this.watches.get(taskId);
  }

  attach(taskId: string, watch: ShellWatch): void {
    this.watches.set(taskId, watch);
  }

  /** A stall was reported at `bytes` of output. */
  stalled(record: ShellTaskRecord, bytes: number): void {
    record.stallReportedAt = bytes;
  }

  /** Records a task's end; true when the agent has not seen it yet (a notification is due). */
  settle(record: ShellTaskRecord, end: { ending: ShellEnding; tail: string; bytes: number; durationMs: number }): boolean {
    record.state = stateOf(end.ending);
    record.ending = end.ending;
    record.tail = end.tail;
    record.bytes = end.bytes;
    record.durationMs = end.durationMs;
    const unseen = !record.notified;
    record.notified = true;
    this.watches.delete(record.taskId);
    this.trim();
    return unseen;
  }

  markSeen(record: ShellTaskRecord): void {
    record.notified = true;
  }

  /** Takes over a previous run's tasks (their watches ended with that run). */
  adopt(records: ShellTaskRecord[], counter: number): void {
    this.records = records.map((r) => ({ ...r }));
    this.counter = counter;
  }

  private trim(): void {
    const finished = this.records.filter((r) => r.state !== 'running');
    if (finished.length <= SHELL_TASK_LIMITS.keptFinished) return;
    const drop = new Set(finished.slice(0, finished.length - SHELL_TASK_LIMITS.keptFinished));
    this.records = this.records.filter((r) => !drop.has(r));
  }
}

/** The record state an ending gives. */
export function stateOf(e: ShellEnding): ShellTaskRecord['state'] {
  if (e.kind === 'exited') return e.code === 0 ? 'completed' : 'failed';
  if (e.kind === 'timeout') return 'timeout';
  if (e.kind === 'stopped') return 'killed';
  return 'failed';
}
