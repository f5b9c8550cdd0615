/**
 * Path containment, the writing half: the only way FileEdit and FileWrite touch disk.
 *
 * A path checked by `paths.ts` can be swapped before it is opened (a directory replaced by
 * a symlink). On Linux that gap is closed with file descriptors: open the canonical parent
 * with O_DIRECTORY|O_NOFOLLOW, ask the kernel where that descriptor really is
 * (`/proc/self/fd/N`) and require it inside the allowed directory, then open the file
 * *through that descriptor* (`/proc/self/fd/N/name`, O_NOFOLLOW, O_CREAT without O_TRUNC),
 * fstat it (a regular file with one link: a hard link could alias a file outside), check
 * its own location the same way, and only then truncate and write through the descriptor.
 * Elsewhere (no /proc) workspace writes use a weaker check-after-open; memory writes are
 * refused there rather than half-protected.
 */
import { constants, existsSync } from 'node:fs';
import { open, readlink, realpath, mkdir, stat, lstat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { isInside, isInsideBytes, planWriteTarget, resolveWriteScope, type WriteScope, type WriteTarget } from './paths';
import { errnoCode, messageOf } from './outcome';
import type { WritePolicy } from './types';

/** What the caller wants written, given the file's current text (null if new). */
export type WriteDecision = { kind: 'write'; content: string } | { kind: 'refuse'; message: string };

/** One write, as FileEdit or FileWrite asks for it. */
export interface ContainedWriteRequest {
  policy: WritePolicy;
  root: string;
  /** As sent by the model: validated here, not trusted. */
  filePath: unknown;
  /** Create the file if missing (FileWrite) or report `not_found` (FileEdit). */
  create: boolean;
  /** Whether `decide` needs the current text (FileEdit) or not (FileWrite). */
  readCurrent: boolean;
  decide: (current: string | null) => WriteDecision;
  /** Refuses writes into protected and hidden paths, and into git's own directory (visible.ts `writeRefusal`). */
  refuse?: (scopeDir: string, canonical: string) => string | null;
}

/** What happened: written (canonical path), denied by containment, missing, or refused by `decide`. */
export type ContainedWriteResult =
  | { kind: 'written'; path: string; created: boolean; bytes: number }
  | { kind: 'denied'; message: string }
  | { kind: 'not_found'; path: string }
  | { kind: 'refused'; message: string };

/** Files larger than this are not loaded for editing. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
// O_NONBLOCK: a FIFO planted in place of a file must not block the open; fstat refuses it.
const FILE_FLAGS = O_RDWR | O_NOFOLLOW | O_NONBLOCK;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

let procFd: boolean | undefined;
/** Whether `/proc/self/fd` can be used to ask the kernel where a descriptor is. */
export function procFdAvailable(): boolean {
  procFd ??= process.platform === 'linux' && existsSync('/proc/self/fd');
  return procFd;
}

class Denied extends Error {}
const RACE = 'the path changed while it was being written (a symlink or directory was swapped); retry with a plain path';

function fdPath(handle: FileHandle, name?: string): string {
  return name === undefined ? `/proc/self/fd/${handle.fd}` : `/proc/self/fd/${handle.fd}/${name}`;
}

/** Throws `Denied` unless the descriptor's real location is inside `dir` (bytes). */
async function assertFdInside(handle: FileHandle, dir: Buffer, what: string): Promise<void> {
  const where = await readlink(fdPath(handle), { encoding: 'buffer' });
  if (!isInsideBytes(where, dir)) {
    throw new Denied(`Denied: ${what} is really at ${where.toString()}, outside ${dir.toString()}; ${RACE}.`);
  }
}

async function openDirInside(pathOrFd: string, dir: Buffer): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(pathOrFd, DIR_FLAGS);
  } catch (err) {
    throw new Denied(`Denied: cannot open the parent directory (${errnoCode(err) ?? messageOf(err)}); ${RACE}.`);
  }
  try {
    const st = await handle.stat();
    // nlink 0: a removed directory, whose /proc name ends in " (deleted)".
    if (!st.isDirectory() || st.nlink < 1) throw new Denied(`Denied: the parent directory no longer exists; ${RACE}.`);
    await assertFdInside(handle, dir, 'the parent directory');
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Opens the parent through descriptors, creating missing directories one by one. */
async function openParent(target: WriteTarget, dir: Buffer): Promise<FileHandle> {
  let current = await openDirInside(target.parent, dir);
  for (const name of target.missing) {
    try {
      await mkdir(fdPath(current, name)).catch((err: unknown) => {
        if (errnoCode(err) !== 'EEXIST') throw err;
      });
      const next = await openDirInside(fdPath(current, name), dir);
      await current.close();
      current = next;
    } catch (err) {
      await current.close();
      throw err;
    }
  }
  return current;
}

function describeOpenError(err: unknown, shown: string): Denied | undefined {
  switch (errnoCode(err)) {
    case 'ELOOP':
      return new Denied(`Denied: ${shown} is a symbolic link; ${RACE}.`);
    case 'EISDIR':
      return new Denied(`Denied: ${shown} is a directory, not a file.`);
    case 'ENXIO':
    case 'ETXTBSY':
      return new Denied(`Denied: ${shown} is not a regular file.`);
    case 'EACCES':
    case 'EPERM':
      return new Denied(`Denied: no permission to write ${shown}.`);
    default:
      return undefined;
  }
}

/** Opens (or creates) the file; `null` when it is missing and `create` is false. */
async function openFile(location: string, create: boolean, shown: string): Promise<{ handle: FileHandle; created: boolean } | null> {
  try {
    if (create) {
      try {
        return { handle: await open(location, FILE_FLAGS | O_CREAT | O_EXCL, 0o666), created: true };
      } catch (err) {
        if (errnoCode(err) !== 'EEXIST') throw err;
      }
    }
    return { handle: await open(location, FILE_FLAGS), created: false };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') {
      if (create) throw new Denied(`Denied: ${shown} ${RACE}.`);
      return null;
    }
    throw describeOpenError(err, shown) ?? err;
  }
}

/** Regular file, exactly one link; throws `Denied` otherwise. */
async function assertPlainFile(handle: FileHandle, shown: string): Promise<void> {
  const st = await handle.stat();
  if (!st.isFile()) throw new Denied(`Denied: ${shown} is not a regular file.`);
  if (st.nlink !== 1) {
    throw new Denied(`Denied: ${shown} has ${st.nlink} hard links; one of them may be outside the allowed directory, so it is not written.`);
  }
}

async function readAll(handle: FileHandle, shown: string): Promise<string> {
  const { size } = await handle.stat();
  if (size > MAX_EDIT_BYTES) throw new Denied(`${shown} is ${size} bytes, more than FileEdit handles (${MAX_EDIT_BYTES}); use FileWrite with the whole new content.`);
  const buffer = Buffer.alloc(size);
  let filled = 0;
  while (filled < size) {
    const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled).toString('utf8');
}

async function replaceContent(handle: FileHandle, content: string): Promise<number> {
  const data = Buffer.from(content, 'utf8');
  await handle.truncate(0);
  let written = 0;
  while (written < data.length) {
    const { bytesWritten } = await handle.write(data, written, data.length - written, written);
    written += bytesWritten;
  }
  return data.length;
}

/** Finishes a write on an opened, verified file. */
async function complete(handle: FileHandle, created: boolean, req: ContainedWriteRequest, canonical: string): Promise<ContainedWriteResult> {
  const current = req.readCurrent && !created ? await readAll(handle, canonical) : null;
  const decision = req.decide(current);
  if (decision.kind === 'refuse') return { kind: 'refused', message: decision.message };
  const bytes = await replaceContent(handle, decision.content);
  return { kind: 'written', path: canonical, created, bytes };
}

async function writeViaProcFd(scope: WriteScope, target: WriteTarget, req: ContainedWriteRequest): Promise<ContainedWriteResult> {
  // Canonicalise the allowed directory once more, as bytes, right before opening.
  const dir = await realpath(scope.dir, { encoding: 'buffer' });
  if (dir.toString() !== scope.dir) throw new Denied(`Denied: the ${scope.label} moved during the call; ${RACE}.`);
  if (scope.kind === 'within' && target.missing.length > 0) throw new Denied('Denied: memory writes do not create directories.');
  const parent = await openParent(target, dir);
  let file: { handle: FileHandle; created: boolean } | null = null;
  try {
    file = await openFile(fdPath(parent, target.name), req.create, target.canonical);
    if (file === null) return { kind: 'not_found', path: target.canonical };
    await assertPlainFile(file.handle, target.canonical);
    await assertFdInside(file.handle, dir, target.canonical);
    const canonical = (await readlink(fdPath(file.handle))).toString();
    return await complete(file.handle, file.created, req, canonical);
  } catch (err) {
    if (file?.created === true) await removeCreated(parent, target.name, file.handle);
    throw err;
  } finally {
    await file?.handle.close();
    await parent.close();
  }
}

/** Undoes an O_CREAT whose file was then refused, if the name still is that file. */
async function removeCreated(parent: FileHandle, name: string, handle: FileHandle): Promise<void> {
  try {
    const [ours, named] = await Promise.all([handle.stat(), lstat(fdPath(parent, name))]);
    if (ours.ino === named.ino && ours.dev === named.dev) await unlink(fdPath(parent, name));
  } catch {
    // Best effort: the file was created inside the verified directory, and is empty.
  }
}

/** Without /proc: open by canonical path, then check the opened inode is still there. */
async function writePortable(scope: WriteScope, target: WriteTarget, req: ContainedWriteRequest): Promise<ContainedWriteResult> {
  if (scope.kind === 'within') {
    throw new Denied('Denied: memory writes need Linux /proc/self/fd to be verified, which this system lacks.');
  }
  if (target.missing.length > 0) await mkdir(path.dirname(target.canonical), { recursive: true });
  const file = await openFile(target.canonical, req.create, target.canonical);
  if (file === null) return { kind: 'not_found', path: target.canonical };
  try {
    await assertPlainFile(file.handle, target.canonical);
    const [opened, now] = await Promise.all([file.handle.stat(), realpath(target.canonical).then(async (p) => ({ p, s: await stat(p) }))]);
    if (!isInside(now.p, scope.dir) || now.s.ino !== opened.ino || now.s.dev !== opened.dev) {
      throw new Denied(`Denied: ${target.canonical} ${RACE}.`);
    }
    return await complete(file.handle, file.created, req, now.p);
  } finally {
    await file.handle.close();
  }
}

/**
 * The policy one write is held to: a workspace policy with a memory (a `memory: user` agent's,
 * outside the workspace) holds an absolute path lexically inside that memory to the memory's
 * own rules (`within`: pinned, absolute paths, no new directories), anything else to the workspace.
 */
function policyFor(policy: WritePolicy, filePath: unknown): WritePolicy {
  if (policy.kind !== 'workspace' || !policy.memory || typeof filePath !== 'string' || !path.isAbsolute(filePath)) return policy;
  return isInside(path.resolve(filePath), policy.memory.dir) ? { kind: 'within', dir: policy.memory.dir, canonicalDir: policy.memory.canonicalDir } : policy;
}

/**
 * Writes one file under a write policy, or says why not. Never throws for anything a
 * model can cause (denials, races, missing files); I/O failures it cannot classify are
 * returned as `denied` with the system's message.
 *
 * @example
 * const r = await writeContained({ policy, root, filePath: '/mem/notes.md', create: true,
 *   readCurrent: false, decide: () => ({ kind: 'write', content: 'hello' }) });
 */
export async function writeContained(req: ContainedWriteRequest, opts: { useProcFd?: boolean } = {}): Promise<ContainedWriteResult> {
  const scope = await resolveWriteScope(policyFor(req.policy, req.filePath), req.root);
  if (!scope.ok) return { kind: 'denied', message: scope.message };
  const target = await planWriteTarget(scope.scope, req.filePath, req.root);
  if (!target.ok) return { kind: 'denied', message: target.message };
  const refusal = req.refuse?.(scope.scope.dir, target.canonical);
  if (refusal) return { kind: 'denied', message: refusal };
  return executeWrite(scope.scope, target, req, opts);
}

/**
 * The second half of `writeContained`: performs a write already planned by
 * `planWriteTarget`, re-verifying everything through descriptors. Exported so tests can
 * swap paths between the check and the write deterministically.
 */
export async function executeWrite(scope: WriteScope, target: WriteTarget, req: ContainedWriteRequest, opts: { useProcFd?: boolean } = {}): Promise<ContainedWriteResult> {
  try {
    return (opts.useProcFd ?? procFdAvailable()) ? await writeViaProcFd(scope, target, req) : await writePortable(scope, target, req);
  } catch (err) {
    if (err instanceof Denied) return { kind: 'denied', message: err.message };
    return { kind: 'denied', message: `Could not write ${target.canonical}: ${errnoCode(err) ?? ''} ${messageOf(err)}`.trim() };
  }
}
