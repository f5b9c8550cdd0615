/**
 * The children part of an agent's state: its sub-agents on record (running ones and the
 * newest finished ones), the counter their ids are numbered by, and the live handles of
 * running ones. This class is its only writer — children.ts drives it as child workflows
 * start and end; everything else reads `all`, `running` and `find`.
 */
import type { CancellationScope } from '@temporalio/workflow';
import { addUsage, ZERO_USAGE } from '../../shared/messages-api/anthropic';
import type { FoldedUsage } from '../../shared/wire/carried-state';
import type { ChildOutcome, ChildRecord } from '../../shared/tree/tree-input';

/** Live handle of a running child (not state: rebuilt by replay, never carried). */
export interface ChildRuntime {
  scope: CancellationScope;
  done: Promise<void>;
  /** Started with ParentClosePolicy.ABANDON: it outlives this run and reports its outcome by signal. */
  outlives: boolean;
}

export class ChildTable {
  private records: ChildRecord[] = [];
  private counter = 0;
  /** Children actually started (ids are also used up by refused calls); resumes not counted. */
  private launched = 0;
  /** Usage of finished children no longer on record: trimmed, or (resumed) counted again by their new run. */
  private foldedUsage: FoldedUsage = { usage: ZERO_USAGE, costUsd: 0, agents: 0 };
  private readonly runtimes = new Map<string, ChildRuntime>();
  /** Outliving children this run started, until they close (their report may settle them first). */
  private readonly closing = new Map<string, Promise<void>>();

  /** Every child on record, oldest first (read-only view). */
  get all(): readonly ChildRecord[] {
    return this.records;
  }

  get running(): ChildRecord[] {
    return this.records.filter((c) => c.state === 'running');
  }

  /** Running children this run did not start: a previous run did, and they outlived it. */
  get adopted(): ChildRecord[] {
    return this.running.filter((c) => !this.runtimes.has(c.agentId));
  }

  /** How many children were ever started (carried, so ids stay unique across runs). */
  get started(): number {
    return this.counter;
  }

  /** By agent id, else the newest child of that name. */
  find(ref: string): ChildRecord | undefined {
    return this.records.find((c) => c.agentId === ref) ?? [...this.records].reverse().find((c) => c.name === ref);
  }

  get spawned(): number {
    return this.launched;
  }

  get folded(): FoldedUsage {
    return this.foldedUsage;
  }

  runtime(agentId: string): ChildRuntime | undefined {
    return this.runtimes.get(agentId);
  }

  get liveRuntimes(): ChildRuntime[] {
    return [...this.runtimes.values()];
  }

  /** Numbers the next child: `<parent>.<name or kind>-<n>`. */
  nextId(parentId: string, label: string): string {
    this.counter += 1;
    return `${parentId}.${label}-${this.counter}`;
  }

  /** A child started (`resumed`: an earlier child running again, not a new spawn). */
  add(record: ChildRecord, resumed = false): void {
    this.records.push(record);
    if (!resumed) this.launched += 1;
  }

  /** Adds to the usage of children no longer on record. */
  fold(f: FoldedUsage): void {
    this.foldedUsage = { usage: addUsage(this.foldedUsage.usage, f.usage), costUsd: this.foldedUsage.costUsd + f.costUsd, agents: this.foldedUsage.agents + f.agents };
  }

  attach(agentId: string, runtime: ChildRuntime): void {
    this.runtimes.set(agentId, runtime);
    if (runtime.outlives) {
      const closed = runtime.done.then(() => void this.closing.delete(agentId));
      this.closing.set(agentId, closed);
    }
  }

  /** Outliving children this run started that have not closed yet (their parent's run waits for them before it ends). */
  get unclosed(): Promise<void>[] {
    return [...this.closing.values()];
  }

  /** Takes a finished child off the record (it is about to run again, resumed). */
  remove(record: ChildRecord): void {
    this.records = this.records.filter((c) => c !== record);
  }

  /** Records a child's outcome; true when its parent has not seen it yet (a notification is due). */
  settle(record: ChildRecord, outcome: ChildOutcome, keepCompleted: number): boolean {
    record.state = outcome.status;
    record.result = outcome;
    const unseen = !record.notified;
    record.notified = true;
    this.runtimes.delete(record.agentId);
    this.trim(keepCompleted);
    return unseen;
  }

  /** A sync child still running past its wait: its outcome will arrive as a notification. */
  moveToBackground(record: ChildRecord): void {
    record.mode = 'background';
    record.notified = false;
  }

  markSeen(record: ChildRecord): void {
    record.notified = true;
  }

  /** Takes over a previous run's children (their runtimes ended with that run). */
  adopt(records: ChildRecord[], counter: number, spawned?: number, folded?: FoldedUsage): void {
    this.records = [...records];
    this.counter = counter;
    this.launched = spawned ?? records.length;
    if (folded) this.foldedUsage = folded;
  }

  /** Keeps running children and the newest finished ones (bounded record); the usage of the dropped ones is folded, never lost. */
  private trim(keep: number): void {
    const finished = this.records.filter((c) => c.state !== 'running');
    if (finished.length <= keep) return;
    const drop = new Set(finished.slice(0, finished.length - keep));
    for (const c of drop) if (c.result) this.fold({ usage: c.result.treeUsage, costUsd: c.result.treeCostUsd, agents: 1 });
    this.records = this.records.filter((c) => !drop.has(c));
  }
}
