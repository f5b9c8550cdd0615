/**
 * The private directory a stdio MCP server runs in when its config names no `cwd` (connect.ts):
 * made fresh per session (0700, random name, under the worker's state directory), removed
 * when the session closes or its start is refused. A worker that is killed removes nothing,
 * so each directory's name carries its host and process id (`server-<host>-<pid>-XXXXXX`), and
 * whenever a worker makes one it first sweeps those of this host's processes that are gone
 * (as the sandbox sweeps the cgroups of dead calls): no directory outlives its worker for
 * longer than the next start of a stdio server on that host. Another host's (a state
 * directory on a shared volume) are left to that host: its process ids mean nothing here.
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

const NAME = /^server-(.+)-(\d+)-[A-Za-z0-9]{6}$/;
const HOST = hostname().replace(/[^A-Za-z0-9.]/g, '_').slice(0, 40) || 'host';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists (another user's); only ESRCH says it is gone.
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Removes `dir` and all in it; tried again briefly while a dying server still writes there. */
export async function removeScratch(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => undefined);
}

/** Removes the directories under `base` of this host's worker processes that are gone; returns how many. */
export async function sweepScratch(base: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return 0;
  }
  let swept = 0;
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m || m[1] !== HOST || Number(m[2]) === process.pid || alive(Number(m[2]))) continue;
    await removeScratch(join(base, name));
    swept += 1;
  }
  return swept;
}

/**
 * A fresh, empty directory of this user's alone (0700, random name) under `base`, after
 * sweeping those of dead workers. Never the agent's workspace: a writing fork could otherwise
 * plant what a relative command, `npx` or `python -m` would then run outside the sandbox when
 * the next session starts.
 */
export async function makeScratch(base: string): Promise<string> {
  await mkdir(base, { recursive: true, mode: 0o700 });
  await sweepScratch(base);
  return mkdtemp(join(base, `server-${HOST}-${process.pid}-`));
}
