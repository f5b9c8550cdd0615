/**
 * Opens a named agent's memory directory in its workspace and reads the start of its index
 * (src/shared/agents/agent-memory.ts says what the scopes are and what reaches the prompt). The
 * directory's path comes from the definition, and the workspace may hold anything a model or
 * another user left there, so nothing is followed out of the workspace: each missing level is
 * created only under a level already checked to lie inside it, a level that resolves outside
 * (a planted symlink) or into the worker's protected state is refused, and the index is opened
 * without following a symlink and read only when it is a plain file and still the file its
 * name resolves to inside the directory, at most a bounded prefix. A writer racing this call
 * could at worst have an empty directory of the agent's name made where a level it swapped
 * led; nothing is read or written there (the next check refuses it).
 */
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, realpath, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { agentMemoryPath, MEMORY_INDEX_BYTES, MEMORY_INDEX_FILE, MEMORY_INDEX_LINES, type AgentMemory, type MemoryIndex } from '../shared/agents/agent-memory';
import { within } from './tools/sandbox';

/** Why the memory directory cannot be used (the message names the path and what to do). */
export class AgentMemoryError extends Error {}

/** Where the memory may not be (all canonical): the worker's protected state, and `.forkflow/` folders the agent's view hides. */
export interface MemoryWalls {
  protectedPaths: readonly string[];
  hidden: readonly string[];
}

/** `dir` (canonical) inside the workspace `root` (canonical), clear of every protected path and out of every hidden one. */
function checkInside(dir: string, root: string, walls: MemoryWalls, shown: string): void {
  if (!within(dir, root)) throw new AgentMemoryError(`The agent's memory directory ${shown} resolves to ${dir}, outside its workspace ${root}; remove the link that leads there.`);
  if (walls.protectedPaths.some((p) => within(dir, p) || within(p, dir))) throw new AgentMemoryError(`The agent's memory directory ${shown} is, or holds, the worker's protected state.`);
  if (walls.hidden.some((h) => within(dir, h) || within(h, dir))) throw new AgentMemoryError(`The agent's memory directory ${shown} resolves to ${dir}, in forkflow's own state (.forkflow), which no agent sees; remove the link that leads there.`);
}

/** A file-system error on the way as a clear refusal (a dangling or looping link, a level that is a file, no permission). */
function refusal(err: unknown, shown: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const why: Record<string, string> = { ENOENT: 'a link on the way leads nowhere', ELOOP: 'a link on the way loops', ENOTDIR: 'a level on the way is not a directory', EACCES: 'the worker may not open a level on the way', EPERM: 'the worker may not open a level on the way' };
  return code && why[code] ? new AgentMemoryError(`The agent's memory directory ${shown} cannot be opened: ${why[code]} (${code}).`) : err;
}

/** Creates the memory directory level by level, never through a link out of the workspace; returns its canonical path. */
async function openDir(root: string, relative: string, walls: MemoryWalls): Promise<string> {
  const shown = path.join(root, relative);
  let current = root;
  for (const part of relative.split('/')) {
    const next = path.join(current, part);
    try {
      current = await openLevel(next, root, walls, shown);
    } catch (err) {
      throw refusal(err, shown);
    }
  }
  return current;
}

/** One level of the memory directory: made if missing, resolved, checked; its canonical path. */
async function openLevel(next: string, root: string, walls: MemoryWalls, shown: string): Promise<string> {
  let made = false;
  let info;
  try {
    info = await lstat(next);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    // The level above is canonical and was checked: a level made in it is inside too, unless a racing writer swapped it.
    made = await mkdir(next).then(() => true, (e: NodeJS.ErrnoException) => (e.code === 'EEXIST' ? false : Promise.reject(e)));
    info = await lstat(next);
  }
  if (!info.isDirectory() && !info.isSymbolicLink()) throw new AgentMemoryError(`The agent's memory directory ${shown} cannot be made: ${next} is not a directory.`);
  const canonical = await realpath(next);
  try {
    checkInside(canonical, root, walls, shown);
  } catch (err) {
    // A directory this call made where a swapped level led: removed again (it is empty).
    if (made) await rmdir(canonical).catch(() => undefined);
    throw err;
  }
  if (!(await stat(canonical)).isDirectory()) throw new AgentMemoryError(`The agent's memory directory ${shown} cannot be made: ${next} is not a directory.`);
  return canonical;
}

/**
 * Whether the file `opened` (the handle's stat) is the one `file` names inside `dir` now. The
 * directories were checked before the open, but a writer racing the open could swap one of them
 * for a link out of the workspace (no link is followed for the last name only): the file read
 * must be the same inode as the one `file` resolves to inside `dir`.
 */
export async function isFileIn(opened: Stats, file: string, dir: string): Promise<boolean> {
  try {
    const named = await realpath(file);
    if (!within(named, dir)) return false;
    const now = await stat(named);
    return now.dev === opened.dev && now.ino === opened.ino;
  } catch {
    return false;
  }
}

/** The first lines of the index, bounded in lines and bytes; undefined when there is none. */
async function readIndex(dir: string): Promise<{ index?: string; truncated: boolean }> {
  let handle;
  try {
    // No link followed (a link to a key file is not an index); non-blocking, so a FIFO cannot hold the call.
    handle = await open(path.join(dir, MEMORY_INDEX_FILE), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { truncated: false };
    if (code === 'ELOOP') throw new AgentMemoryError(`The agent's memory index ${path.join(dir, MEMORY_INDEX_FILE)} is a symbolic link; it must be a file in the memory directory.`);
    throw err;
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new AgentMemoryError(`The agent's memory index ${path.join(dir, MEMORY_INDEX_FILE)} is not a plain file.`);
    if (!(await isFileIn(opened, path.join(dir, MEMORY_INDEX_FILE), dir))) throw new AgentMemoryError(`The agent's memory index ${path.join(dir, MEMORY_INDEX_FILE)} changed while it was opened (a directory above it was replaced); try again.`);
    const buffer = Buffer.alloc(MEMORY_INDEX_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const over = bytesRead > MEMORY_INDEX_BYTES;
    // A cut inside a multi-byte character leaves a replacement character: dropped.
    let text = buffer.subarray(0, Math.min(bytesRead, MEMORY_INDEX_BYTES)).toString('utf8');
    if (over) text = text.replace(/\uFFFD+$/, '');
    const lines = text.split('\n');
    if (over && lines.length > 1) lines.pop(); // the last line was cut: keep whole lines only
    // Trailing blank lines are not lines of the index (a file of exactly 200 lines ends in a newline).
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
    const kept = lines.slice(0, MEMORY_INDEX_LINES);
    const truncated = over || lines.length > MEMORY_INDEX_LINES;
    return { index: kept.join('\n'), truncated };
  } finally {
    await handle.close();
  }
}

/** The memory directory of `memory` in the canonical workspace `root`, made if missing, and its index. */
export async function openAgentMemory(root: string, memory: AgentMemory, walls: MemoryWalls): Promise<MemoryIndex> {
  const dir = await openDir(root, agentMemoryPath(memory), walls);
  return { dir, ...(await readIndex(dir)) };
}
