/**
 * The isolation part of an agent's state: where its tools act and what they wrote — its git
 * worktree, its pinned memory directory, the paths its writes touched (audited at the
 * end of a memory fork), and what contained its shell commands (the OS sandbox, the
 * classifier alone, or nothing). This class is its only writer; isolation.ts sets the worktree and
 * the memory directory, tool rounds record writes, and everything else reads.
 */
import type { MemoryScope, ToolCallResult, WorktreeRef } from '../../shared/wire/activity-io';

type Containment = NonNullable<ToolCallResult['containment']>;

export class WorkArea {
  private ownWorktree?: WorktreeRef;
  private pinned?: MemoryScope;
  private readonly written: string[] = [];
  private shell?: Containment;

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

  /** What contained its latest Bash call on the worker (absent before the first). */
  get containment(): Containment | undefined {
    return this.shell;
  }

  recordContainment(containment: Containment): void {
    this.shell = containment;
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
