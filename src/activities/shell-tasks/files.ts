/**
 * Where a background shell task lives on its host: a private directory per agent under the
 * worker's state directory (which no fork's tools can see: tools/sandbox/protected.ts), and in
 * it, per task, its output (`.log`, written by the command itself), its exit code (`.exit`,
 * written by the supervising shell when the command ends) and what the worker needs to find it
 * again after a restart (`.json`: process group, deadline, cgroup). A task id names files only
 * after it is checked, and the agent's directory is a hash of its id: one agent cannot name
 * another's files.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SHELL_TASK_ID } from '../../shared/tools/shell-tasks';
import { defaultStateDir } from '../tools/sandbox';

/** The directory every agent's task directories are under (default: `<state dir>/shell-tasks`). */
export function defaultShellTaskDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(defaultStateDir(env), 'shell-tasks');
}

/** A task id from elsewhere is refused before it can name a path. */
export class BadShellTaskIdError extends Error {
  override name = 'BadShellTaskIdError';
}

export interface TaskFiles {
  dir: string;
  log: string;
  exit: string;
  meta: string;
}

/** The files of `taskId` of `agentId` under `base` (the agent's directory is created, 0700). */
export function taskFiles(base: string, agentId: string, taskId: string, create = false): TaskFiles {
  if (!SHELL_TASK_ID.test(taskId)) throw new BadShellTaskIdError(`not a background task id: ${taskId.slice(0, 80)}`);
  const dir = path.join(base, createHash('sha256').update(agentId).digest('hex').slice(0, 32));
  if (create) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const at = (ext: string) => path.join(dir, `${taskId}.${ext}`);
  return { dir, log: at('log'), exit: at('exit'), meta: at('json') };
}

const metaSchema = z.object({
  v: z.literal(1),
  pgid: z.number().int().positive(),
  startedAt: z.number(),
  deadline: z.number(),
  outputLimit: z.number(),
  /** The call's pids cgroup (`cgroup.procs` path), released when it ends. */
  cgroupProcs: z.string().optional(),
  containment: z.enum(['sandbox', 'classifier-only', 'none']),
});
export type TaskMeta = z.infer<typeof metaSchema>;

/** Written once the process is started (atomically: a reader never sees half of it). */
export function writeMeta(files: TaskFiles, meta: TaskMeta): void {
  writeFileSync(`${files.meta}.tmp`, JSON.stringify(meta), { mode: 0o600 });
  renameSync(`${files.meta}.tmp`, files.meta);
}

/** The task's record on this host, or undefined (another host's, or never started here). */
export function readMeta(files: TaskFiles): TaskMeta | undefined {
  try {
    const parsed = metaSchema.safeParse(JSON.parse(readFileSync(files.meta, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The exit code the supervising shell recorded, or undefined while it runs (or when it was killed). */
export function readExit(files: TaskFiles): number | undefined {
  try {
    const text = readFileSync(files.exit, 'utf8').trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes of output so far. */
export function outputBytes(files: TaskFiles): number {
  try {
    return statSync(files.log).size;
  } catch {
    return 0;
  }
}

/** The last `chars` characters (about: bytes, decoded) of the output, marked when cut. */
export function outputTail(files: TaskFiles, chars: number): string {
  let fd: number;
  try {
    fd = openSync(files.log, 'r');
  } catch {
    return '';
  }
  try {
    const size = statSync(files.log).size;
    const length = Math.min(size, chars);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    const text = buf.toString('utf8');
    return size > length ? `[… ${size - length} bytes before this]\n${text}` : text;
  } finally {
    closeSync(fd);
  }
}
