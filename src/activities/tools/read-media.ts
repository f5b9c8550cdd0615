/**
 * Read of an image or a PDF (as Claude Code's Read does): `.png`, `.jpg`/`.jpeg`, `.gif` and
 * `.webp` come back as an image block, `.pdf` as a document block (`pages`: some of its
 * pages, pdf-subset.ts), so the model sees the file itself. Within the API's limits
 * (src/shared/messages-api/media-limits.ts): a file the API would refuse (over 5 MB of base64, over
 * 8000 px, not the format its name says and no other it takes, an encrypted PDF, more pages
 * than a request takes) is refused by name with what to do instead. The caller (read.ts) has
 * already confined the path and opened the file; this reads the open descriptor.
 */
import type { FileHandle } from 'node:fs/promises';
import { imageInfo } from '../../shared/messages-api/image-size';
import { imageIssue, MEDIA_LIMITS } from '../../shared/messages-api/media-limits';
import { pdfFacts } from '../../shared/messages-api/pdf-pages';
import type { ReadInput } from '../../shared/tools/schemas';
import { fail } from './outcome';
import { selectPages } from './pdf-subset';
import type { ToolContext, ToolOutcome } from './types';

const IMAGE_EXTENSIONS: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };

export const READ_MEDIA_LIMITS = Object.freeze({
  /** An image file whose base64 stays within the API's 5 MB. */
  maxImageBytes: Math.floor((MEDIA_LIMITS.maxImageBase64 * 3) / 4),
  /** A PDF file: its base64 (a third larger) stays well within a request's 32 MB. */
  maxPdfBytes: 20 * 1024 * 1024,
  /** Pages of one Read of a PDF (the API's per-request limit on a 200K-token window). */
  maxPdfPages: MEDIA_LIMITS.maxPdfPages,
});

export type MediaKind = { kind: 'image'; mediaType: string } | { kind: 'pdf' };

/** The kind of file Read returns as a block, by its name; undefined for text. */
export function mediaKindOf(path: string): MediaKind | undefined {
  const dot = path.lastIndexOf('.');
  const ext = dot >= 0 ? path.slice(dot).toLowerCase() : '';
  if (ext === '.pdf') return { kind: 'pdf' };
  const mediaType = IMAGE_EXTENSIONS[ext];
  return mediaType ? { kind: 'image', mediaType } : undefined;
}

const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

async function readAll(handle: FileHandle, size: number, ctx: ToolContext): Promise<Buffer> {
  const buf = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    const { bytesRead } = await handle.read(buf, at, Math.min(1 << 20, size - at), at);
    if (bytesRead === 0) break;
    at += bytesRead;
    ctx.heartbeat({ read: at });
  }
  return buf.subarray(0, at);
}

/** Reads the open file `handle` (`size` bytes) as an image or document block. */
export async function readMedia(handle: FileHandle, size: number, kind: MediaKind, input: ReadInput, ctx: ToolContext): Promise<ToolOutcome> {
  const name = input.file_path;
  if (input.pages !== undefined && kind.kind !== 'pdf') return fail(`pages is for PDF files; ${name} is an image. Read it without pages.`);
  if (kind.kind === 'image') {
    if (size > READ_MEDIA_LIMITS.maxImageBytes) {
      return fail(`${name} is ${mb(size)}; the API takes an image of at most 5 MB as base64 (about ${mb(READ_MEDIA_LIMITS.maxImageBytes)} of file). Make a smaller copy (scaled down, or as JPEG) with Bash and Read that.`);
    }
    const data = (await readAll(handle, size, ctx)).toString('base64');
    // The bytes decide the media type (a .png that is really a JPEG is sent as what it is).
    const info = imageInfo(data);
    const block = { type: 'image' as const, source: { type: 'base64' as const, media_type: info?.format ?? kind.mediaType, data } };
    const issue = imageIssue(block);
    if (issue) return fail(`${name} cannot be shown to the model: ${issue}.`);
    return { content: `${name}: ${info!.format}, ${info!.width}×${info!.height} px`, blocks: [block], isError: false };
  }
  if (size > READ_MEDIA_LIMITS.maxPdfBytes) {
    return fail(`${name} is ${mb(size)}, more than the ${mb(READ_MEDIA_LIMITS.maxPdfBytes)} Read sends of a PDF. Split it (e.g. with qpdf or pdftk in Bash), or extract its text (pdftotext) and Read that.`);
  }
  let bytes = await readAll(handle, size, ctx);
  if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') return fail(`${name} is not a PDF (it does not start with %PDF-).`);
  const facts = pdfFacts(bytes.toString('base64'));
  if (facts.encrypted) return fail(`${name} is encrypted (password-protected); the API takes only unencrypted PDFs. Decrypt it first (e.g. qpdf --decrypt) and Read the copy.`);
  let note = '';
  if (input.pages !== undefined) {
    const picked = selectPages(bytes, input.pages);
    if (!picked.ok) return fail(`${name}: ${picked.message}`);
    bytes = picked.pdf;
    note = `pages ${input.pages} of ${picked.total}`;
  } else if (facts.pages !== undefined && facts.pages > READ_MEDIA_LIMITS.maxPdfPages) {
    return fail(`${name} has ${facts.pages} pages; one Read takes at most ${READ_MEDIA_LIMITS.maxPdfPages}. Read it in parts with pages (e.g. pages: "1-${READ_MEDIA_LIMITS.maxPdfPages}").`);
  }
  const document = { type: 'document' as const, source: { type: 'base64' as const, media_type: 'application/pdf', data: bytes.toString('base64') } };
  const line = `${name}: PDF, ${note || `${facts.pages ?? 'unknown number of'} pages`}`;
  return { content: line, blocks: note ? [{ type: 'text', text: line }, document] : [document], isError: false };
}
