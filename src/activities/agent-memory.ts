/**
 * Opens a named agent's memory directory in its workspace and reads the start of its index
 * (src/shared/agent-memory.ts says what the scopes are and what reaches the prompt). The
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
import { lstat, mkdir, open, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { agentMemoryPath, MEMORY_INDEX_BYTES, MEMORY_INDEX_FILE, MEMORY_INDEX_LINES, type AgentMemory, type MemoryIndex } from '../shared/agent-memory';
import { within } from './tools/sandbox';

/** Why the memory directory cannot be used (the message names the path and what to do). */
export class AgentMemoryError extends Error {}

/** `dir` (canonical) inside the workspace `root` (canonical) and clear of every protected path. */
function checkInside(dir: string, root: string, protectedPaths: readonly string[], shown: string): void {
  if (!within(dir, root)) throw new AgentMemoryError(`The agent's memory directory ${shown} resolves to ${dir}, outside its workspace ${root}; remove the link that leads there.`);
  if (protectedPaths.some((p) => within(dir, p) || within(p, dir))) throw new AgentMemoryError(`The agent's memory directory ${shown} is, or holds, the worker's protected state.`);
}

/** Creates the memory directory level by level, never through a link out of the workspace; returns its canonical path. */
async function openDir(root: string, relative: string, protectedPaths: readonly string[]): Promise<string> {
  let current = root;
  for (const part of relative.split('/')) {
    const next = path.join(current, part);
    const shown = path.join(root, relative);
    let info;
    try {
      info = await lstat(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // `current` is canonical and inside: a new level made in it is inside too.
      await mkdir(next).catch((e: NodeJS.ErrnoException) => (e.code === 'EEXIST' ? undefined : Promise.reject(e)));
      info = await lstat(next);
    }
    if (!info.isDirectory() && !info.isSymbolicLink()) throw new AgentMemoryError(`The agent's memory directory ${shown} cannot be made: ${next} is not a directory.`);
    const canonical = await realpath(next);
    checkInside(canonical, root, protectedPaths, shown);
    if (!(await lstat(canonical)).isDirectory()) throw new AgentMemoryError(`The agent's memory directory ${shown} cannot be made: ${next} is not a directory.`);
    current = canonical;
  }
  return current;
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
    const kept = lines.slice(0, MEMORY_INDEX_LINES);
    const truncated = over || lines.length > MEMORY_INDEX_LINES;
    return { index: kept.join('\n').replace(/\s+$/, ''), truncated };
  } finally {
    await handle.close();
  }
}

/** The memory directory of `memory` in the canonical workspace `root`, made if missing, and its index. */
export async function openAgentMemory(root: string, memory: AgentMemory, protectedPaths: readonly string[]): Promise<MemoryIndex> {
  const dir = await openDir(root, agentMemoryPath(memory), protectedPaths);
  return { dir, ...(await readIndex(dir)) };
}
