/**
 * The scope's state file (`<stateDir>/state.json`): read, written atomically (temp file +
 * rename, so a crash never leaves half a file), and updated under a small lock file so two
 * activities never interleave a read-modify-write (a rollback must not erase a newer claim).
 */
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { dreamStateSchema, emptyDreamState, type DreamState } from '../../shared/dream/state';

export const STATE_FILE = 'state.json';
/** A lock file older than this belongs to an activity that died mid-update. */
const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

/** Default home of a scope's state and staged transcripts: beside the workspace's other forkflow data. */
export function defaultStateDir(workspaceRoot: string, scope: string): string {
  return path.join(workspaceRoot, '.forkflow', 'dream', scope);
}

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** Reads the state; a missing file is a scope never consolidated. A corrupt one is refused, not guessed at. */
export async function readDreamState(stateDir: string, scope: string): Promise<DreamState> {
  const file = path.join(stateDir, STATE_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return emptyDreamState(scope);
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = dreamStateSchema.safeParse(json);
  if (!parsed.success || parsed.data.scope !== scope) {
    throw ApplicationFailure.create({
      type: 'DreamStateCorrupt',
      message: `The dream state file ${file} is not a valid state of scope ${scope}; fix it or delete it (the scope then counts as never consolidated).`,
      nonRetryable: true,
    });
  }
  return parsed.data;
}

/** Writes the state atomically. */
export async function writeDreamState(stateDir: string, state: DreamState): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, STATE_FILE);
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, `${JSON.stringify(dreamStateSchema.parse(state), null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
}

async function acquire(lockFile: string): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx');
      await handle.close();
      return;
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err;
    }
    const age = await stat(lockFile).then((s) => Date.now() - s.mtimeMs, () => 0);
    if (age > LOCK_STALE_MS) await rm(lockFile, { force: true });
    else if (Date.now() > deadline) throw new Error(`the dream state lock ${lockFile} is busy; retry later`);
    else await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Read-modify-write under the state's lock file. `change` returns the new state (or the same
 * object to leave the file untouched) and a value handed back to the caller.
 */
export async function updateDreamState<T>(stateDir: string, scope: string, change: (s: DreamState) => Promise<{ state: DreamState; value: T }> | { state: DreamState; value: T }): Promise<T> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const lockFile = path.join(stateDir, `${STATE_FILE}.lock`);
  await acquire(lockFile);
  try {
    const before = await readDreamState(stateDir, scope);
    const { state, value } = await change(before);
    if (state !== before) await writeDreamState(stateDir, state);
    return value;
  } finally {
    await rm(lockFile, { force: true });
  }
}
