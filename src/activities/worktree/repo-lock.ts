/**
 * One worktree operation at a time per repository, within this process. Two
 * `git worktree add` in one repository race on `.git/worktrees/` and the shared index
 * and ref locks, and fail with "could not lock" errors; queuing them here is simpler
 * than retrying. (Other processes on the same repository are not covered: their
 * collisions surface as retryable `git-failed` errors.)
 */

const tails = new Map<string, Promise<void>>();

/**
 * Runs `fn` after every earlier call for the same `key` has settled (fulfilled or not),
 * in call order. `key` should be a canonical repository path.
 */
export async function withRepoLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  try {
    await previous;
    return await fn();
  } finally {
    release();
    // Forget the key once nobody queued behind us, so the map does not grow per repository forever.
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/** How many repositories have an operation running or queued (for tests). */
export function lockedRepoCount(): number {
  return tails.size;
}
