/**
 * The isolation part of an agent's state: where its tools act and what they wrote — its git
 * worktree, its pinned memory directory, and the paths its writes touched (audited at the
 * end of a memory fork). This class is its only writer; isolation.ts sets the worktree and
 * the memory directory, tool rounds record writes, and everything else reads.
 */
import type { MemoryScope, WorktreeRef } from '../../shared/activity-io';

export class WorkArea {
  private ownWorktree?: WorktreeRef;
  private pinned?: MemoryScope;
  private readonly written: string[] = [];

  get worktree(): WorktreeRef | undefined {
    return this.ownWorktree;
  }

  get memory(): MemoryScope | undefined {
    return this.pinned;
  }

  /** Canonical paths this agent's tool calls wrote, in order (repeats included). */
  get touched(): readonly string[] {
    return this.written;
  }

  setWorktree(worktree: WorktreeRef): void {
    this.ownWorktree = worktree;
  }

  pinMemory(scope: MemoryScope): void {
    this.pinned = scope;
  }

  recordWrites(paths: readonly string[]): void {
    this.written.push(...paths);
  }
}
