/**
 * Read: a text file as `cat -n` would show it (right-aligned line number, tab, text), a
 * window of lines at a time; an image or a PDF as the model sees it (read-media.ts). Large
 * files must be read in parts, other binary files, directories and special files are
 * refused with a message that says what to use instead. Only files
 * in the fork's view are read (visible.ts), checked by path and again on the descriptor.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { ReadInput } from '../../shared/tools/schemas';
import { cappedLines } from './lines';
import { mediaKindOf, readMedia } from './read-media';
import { errnoCode, fail, messageOf, ok, ToolAbortError } from './outcome';
import { throttledHeartbeat } from './heartbeat';
import { resolveReadPath } from './paths';
import { deniedMessage, descriptorVisible, locate, viewOf } from './visible';
import type { ToolContext, ToolOutcome } from './types';

/** Read's limits (Grep reuses the line cap and binary sniffing). */
export const READ_LIMITS = {
  /** Lines shown when `limit` is not given. */
  defaultLines: 2000,
  /** Characters kept of one line. */
  maxLineChars: 2000,
  /** Files larger than this need `offset` or `limit`. */
  maxWholeFileBytes: 256 * 1024,
  /** How much of the start is checked for NUL bytes to detect binaries. */
  sniffBytes: 8192,
} as const;

function formatLine(n: number, text: string, length: number): string {
  const cut = length > text.length ? ` [... line truncated: ${length} chars in total]` : '';
  return `${String(n).padStart(6)}\t${text}${cut}`;
}

async function openForRead(file: string, shown: string): Promise<FileHandle | ToolOutcome> {
  try {
    // O_NONBLOCK: a FIFO must not hang the call before we can see what it is.
    return await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    switch (errnoCode(err)) {
      case 'ENOENT':
      case 'ENOTDIR':
        return fail(`File not found: ${shown}. Use Glob (e.g. pattern "**/${shown.split('/').pop() ?? shown}") to find the right path.`);
      case 'EACCES':
      case 'EPERM':
        return fail(`Permission denied reading ${shown}.`);
      case 'ELOOP':
        return fail(`${shown} is a symbolic link loop.`);
      default:
        return fail(`Cannot open ${shown}: ${messageOf(err)}`);
    }
  }
}

async function looksBinary(handle: FileHandle): Promise<boolean> {
  const probe = Buffer.alloc(READ_LIMITS.sniffBytes);
  const { bytesRead } = await handle.read(probe, 0, probe.length, 0);
  return probe.subarray(0, bytesRead).includes(0);
}

/**
 * Runs Read on parsed input. Returns numbered lines starting at `offset` (1-based,
 * default 1), at most `limit` (default 2000), with a note when more lines follow.
 */
export async function runRead(input: ReadInput, ctx: ToolContext): Promise<ToolOutcome> {
  const located = resolveReadPath(ctx.root, input.file_path);
  if (!located.ok) return fail(located.message);
  const view = viewOf(ctx);
  const where = await locate(view, located.path);
  if (!where.visible) return fail(deniedMessage(view, input.file_path, where.canonical));
  const opened = await openForRead(located.path, input.file_path);
  if (!('fd' in opened)) return opened;
  const handle = opened;
  try {
    // What was opened, not what the path said a moment ago (a symlink may have been swapped in).
    if (!descriptorVisible(view, handle.fd)) return fail(deniedMessage(view, input.file_path, where.canonical));
    const st = await handle.stat();
    if (st.isDirectory()) return fail(`${input.file_path} is a directory. Use Glob with path "${input.file_path}" to list its files.`);
    if (!st.isFile()) return fail(`${input.file_path} is not a regular file (a device, FIFO or socket); Read only reads regular files.`);
    // An image or a PDF: shown to the model as it is (read-media.ts), within the API's limits.
    const media = mediaKindOf(located.path);
    if (media) return await readMedia(handle, st.size, media, input, ctx);
    if (input.pages !== undefined) return fail(`pages is for PDF files; ${input.file_path} is read as text (use offset and limit).`);
    if (st.size > READ_LIMITS.maxWholeFileBytes && input.offset === undefined && input.limit === undefined) {
      return fail(
        `${input.file_path} is ${Math.ceil(st.size / 1024)} KiB, more than ${READ_LIMITS.maxWholeFileBytes / 1024} KiB. ` +
          'Read it in parts with offset and limit (e.g. offset: 1, limit: 500), or find the relevant lines with Grep first.',
      );
    }
    if (await looksBinary(handle)) return fail(`${input.file_path} looks like a binary file (it contains NUL bytes); Read only shows text files.`);
    if (st.size === 0) return ok(`(${input.file_path} is empty)`);
    return await numberedWindow(handle, input, ctx);
  } finally {
    await handle.close();
  }
}

async function numberedWindow(handle: FileHandle, input: ReadInput, ctx: ToolContext): Promise<ToolOutcome> {
  const first = input.offset ?? 1;
  const limit = input.limit ?? READ_LIMITS.defaultLines;
  const beat = throttledHeartbeat(ctx, 'Read');
  const stream = handle.createReadStream({ start: 0, autoClose: false });
  const out: string[] = [];
  let n = 0;
  let more = false;
  try {
    for await (const line of cappedLines(stream as AsyncIterable<Buffer>, READ_LIMITS.maxLineChars)) {
      if (ctx.signal.aborted) throw new ToolAbortError();
      n += 1;
      if (n < first) continue;
      if (out.length === limit) {
        more = true;
        break;
      }
      out.push(formatLine(n, line.text, line.length));
      beat({ line: n });
    }
  } finally {
    stream.destroy();
  }
  if (out.length === 0) {
    return fail(`${input.file_path} has only ${n} line${n === 1 ? '' : 's'}; offset ${first} is past the end.`);
  }
  if (more) out.push(`[More lines follow. Continue with offset: ${first + limit}.]`);
  return ok(out.join('\n'));
}
