/**
 * Stopping a whole process group: the command's shell and everything it started in the
 * background. SIGTERM first so programs can clean up, SIGKILL after a short grace.
 *
 * "Gone" means no live member: on Linux a member that is already dead but not yet reaped
 * (a zombie, waiting for its parent or PID 1) cannot run and is not counted, since
 * reaping orphans is PID 1's job and some PID 1s do it only every few seconds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { errnoCode } from './outcome';

/** Sends `signal` to every process in the group; a group already gone is fine. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if (errnoCode(err) !== 'ESRCH') throw err;
  }
}

/** Process group and state ('Z' = zombie) of a pid, from /proc/<pid>/stat. */
function procStat(pid: string): { pgrp: number; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/** Whether any member of the group can still run. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return errnoCode(err) !== 'ESRCH';
  }
  if (process.platform !== 'linux') return true;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const st = procStat(pid);
    if (st !== undefined && st.pgrp === pgid && st.state !== 'Z' && st.state !== 'X') return true;
  }
  return false;
}

/** Polls until the group has no live member or `timeoutMs` passes; true if gone. */
export async function waitGroupGone(pgid: number, timeoutMs: number, pollMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!groupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await delay(pollMs);
  }
}

/**
 * SIGTERM the group, SIGKILL it if anything survives `graceMs`, and wait up to
 * `killWaitMs` more for it to be gone. Resolves true when no live member remains.
 */
export async function terminateGroup(pgid: number, graceMs = 400, killWaitMs = 1000): Promise<boolean> {
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, graceMs)) return true;
  signalGroup(pgid, 'SIGKILL');
  return waitGroupGone(pgid, killWaitMs);
}
