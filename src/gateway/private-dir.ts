/**
 * Opening a private store directory, as ssh treats its key files: the directory is created
 * 0700 when missing, and an existing one is refused — with a message that says what to do —
 * when it is a symlink, another user's, open to group or others, or sits in a directory
 * others may write without the sticky bit (where it could be swapped). Inside it, the key
 * that authenticates the entries (`store.key`, 32 random bytes, 0600) is created once and
 * shared by every process that uses the directory; a key file that is not this user's alone
 * is refused the same way.
 *
 * Used by the gateway's call store and, through the worker, by the response store.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, linkSync, lstatSync, mkdirSync, readFileSync, realpathSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { PrivateStore, StoreSealer } from '../shared/wire/private-store';

/** A store directory or key file that is not safe to use. */
export class PrivateDirError extends Error {
  override name = 'PrivateDirError';
}

export function isPrivateDirError(err: unknown): err is PrivateDirError {
  return err instanceof PrivateDirError;
}

const KEY_FILE = 'store.key';
const KEY_BYTES = 32;

const uid = (): number => (typeof process.geteuid === 'function' ? process.geteuid() : -1);
const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/** Refuses `st` unless it is this user's alone. */
function checkOwnMode(what: string, p: string, st: Stats, fix: string): void {
  if (uid() >= 0 && st.uid !== uid()) {
    throw new PrivateDirError(`${what} ${p} belongs to uid ${st.uid}, not to this process's user (uid ${uid()}): another user could read or plant entries there. ${fix}`);
  }
  if ((st.mode & 0o077) !== 0) {
    throw new PrivateDirError(`${what} ${p} has mode ${octal(st.mode)}, open to other users; it must be ${what === 'The key file' ? '0600' : '0700'} (chmod ${what === 'The key file' ? '600' : '700'} ${p}). ${fix}`);
  }
}

/**
 * Every folder above a store must be root's or this user's, and one others may write must be
 * sticky (like /tmp): whoever owns a folder, or may write one that is not sticky, can rename
 * what lies in it and put a directory of their own in its place.
 */
function checkAncestors(absolute: string, fix: string): void {
  // Folders as they really are: a symlinked one (/var/run) is judged by what it points to.
  for (let dir = realpathSync(path.dirname(absolute)); ; dir = path.dirname(dir)) {
    const st = lstatSync(dir);
    if (st.uid !== 0 && uid() >= 0 && st.uid !== uid()) {
      throw new PrivateDirError(`The store directory ${absolute} lies in ${dir}, which belongs to uid ${st.uid}, another user: they could replace it. ${fix}`);
    }
    if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) {
      throw new PrivateDirError(`The store directory ${absolute} lies in ${dir}, which other users may write (mode ${octal(st.mode)}, no sticky bit): they could replace it. ${fix}`);
    }
    if (dir === path.dirname(dir)) return;
  }
}

function directory(dir: string, label: string): string {
  const absolute = path.resolve(dir);
  let st: Stats;
  try {
    st = lstatSync(absolute);
  } catch {
    mkdirSync(absolute, { recursive: true, mode: 0o700 });
    chmodSync(absolute, 0o700); // whatever the umask
    st = lstatSync(absolute);
  }
  const fix = `Remove it, or point ${label} at a directory of this user's own.`;
  if (st.isSymbolicLink()) throw new PrivateDirError(`The store directory ${absolute} is a symbolic link; a private store must be a real directory. ${fix}`);
  if (!st.isDirectory()) throw new PrivateDirError(`The store directory ${absolute} is not a directory. ${fix}`);
  checkOwnMode('The store directory', absolute, st, fix);
  checkAncestors(absolute, fix);
  return realpathSync(absolute);
}

/** The directory's key, created once (atomically: written aside, then linked into place). */
function macKey(dir: string): Uint8Array {
  const file = path.join(dir, KEY_FILE);
  try {
    const st = lstatSync(file);
    if (!st.isFile()) throw new PrivateDirError(`The key file ${file} is not a regular file. Remove it; it is created again.`);
    checkOwnMode('The key file', file, st, 'Remove it; it is created again (entries kept under the old key are then asked anew).');
  } catch (err) {
    if (err instanceof PrivateDirError) throw err;
    const aside = path.join(dir, `.key-${randomUUID()}`);
    writeFileSync(aside, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
    try {
      linkSync(aside, file); // fails if another process made it first: then theirs is used
    } catch {
      // someone else's key won
    } finally {
      unlinkSync(aside);
    }
  }
  const key = readFileSync(file);
  if (key.length !== KEY_BYTES) throw new PrivateDirError(`The key file ${file} holds ${key.length} bytes, not ${KEY_BYTES}. Remove it; it is created again.`);
  return key;
}

/**
 * Opens `dir` as a private store (creating it 0700 when missing), with its authentication
 * key and, when given, the sealer that encrypts its entries. `label` names the setting that
 * chose the directory, for the error messages.
 *
 * @throws PrivateDirError when the directory or its key file is not this user's alone.
 */
export function openPrivateStore(dir: string, opts: { label?: string; sealer?: StoreSealer } = {}): PrivateStore {
  const canonical = directory(dir, opts.label ?? 'the store');
  return { dir: canonical, macKey: macKey(canonical), ...(opts.sealer ? { sealer: opts.sealer } : {}) };
}
