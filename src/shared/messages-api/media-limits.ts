/**
 * What the Messages API refuses in images and documents, checked before anything is sent
 * (platform.claude.com/docs/en/build-with-claude/vision, "General limits"; …/pdf-support,
 * "PDF support requirements"): an image's base64 over 5 MB (5,242,880 characters), a side
 * over 8000 px (2000 px when a request holds more than 20 images), a media type other than
 * JPEG, PNG, GIF or WebP, bytes that are not the format the block names; a PDF that is
 * encrypted, or has more pages than one request takes (100 on a 200K-token window, 600 on
 * larger ones). forkflow refuses such a block by name where it enters a conversation (a tool
 * result, a fork's input) and once more before a request leaves, and the offline model
 * answers it with the API's 400, so a test sees what the API would do.
 * Workflow-safe: pure code.
 */
import { imageInfo, type ImageFormat } from './image-size';
import { looksLikePdf, pdfFacts } from './pdf-pages';

export const MEDIA_LIMITS = Object.freeze({
  /** Characters of one image's base64 (the API measures the encoded string). */
  maxImageBase64: 5 * 1024 * 1024,
  maxImageSide: 8000,
  /** Above `manyImages` images in one request, each side is held to this. */
  maxImageSideMany: 2000,
  manyImages: 20,
  /** Pages of PDFs in one request: on a window up to 200K tokens, and above. */
  maxPdfPages: 100,
  maxPdfPagesLarge: 600,
});

export const IMAGE_MEDIA_TYPES: readonly ImageFormat[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

const fmt = (n: number) => n.toLocaleString('en-US');

type Source = { type?: unknown; media_type?: unknown; data?: unknown };

function sourceOf(block: Record<string, unknown>): Source {
  return block.source !== null && typeof block.source === 'object' ? (block.source) : {};
}

/**
 * Why the API would refuse this image block, or undefined. `many`: the request holds more
 * than 20 images (each side then at most 2000 px).
 *
 * @example imageIssue({ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data } })
 * // 'media type image/bmp is not one the API takes (image/jpeg, image/png, image/gif, image/webp)'
 */
export function imageIssue(block: Record<string, unknown>, many = false): string | undefined {
  const source = sourceOf(block);
  if (source.type !== 'base64') return undefined; // a URL or a file: the API fetches and checks it
  const mediaType = source.media_type;
  if (typeof mediaType !== 'string' || !(IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
    return `media type ${String(mediaType)} is not one the API takes (${IMAGE_MEDIA_TYPES.join(', ')})`;
  }
  if (typeof source.data !== 'string') return 'its base64 data is missing';
  if (source.data.length > MEDIA_LIMITS.maxImageBase64) {
    return `image exceeds 5 MB maximum: ${fmt(source.data.length)} bytes of base64 > ${fmt(MEDIA_LIMITS.maxImageBase64)} bytes`;
  }
  const info = imageInfo(source.data);
  if (!info) return `its bytes are not a PNG, JPEG, GIF or WebP image the API could read (media type ${mediaType})`;
  if (info.format !== mediaType) return `its bytes are ${info.format}, but its media type says ${mediaType}`;
  const side = many ? MEDIA_LIMITS.maxImageSideMany : MEDIA_LIMITS.maxImageSide;
  if (info.width > side || info.height > side) {
    return `image is ${info.width}×${info.height} px, over the API's ${side} px a side${many ? ` (the limit when a request holds more than ${MEDIA_LIMITS.manyImages} images)` : ''}`;
  }
  return undefined;
}

/** Why the API would refuse this document block (a base64 PDF), or undefined; `pages` is what it adds to the request. */
export function documentIssue(block: Record<string, unknown>): { issue?: string; pages: number } {
  const source = sourceOf(block);
  if (source.type !== 'base64') return { pages: 0 };
  if (source.media_type !== 'application/pdf') return { issue: `media type ${String(source.media_type)} is not a document type the API takes (application/pdf)`, pages: 0 };
  if (typeof source.data !== 'string' || !looksLikePdf(source.data)) return { issue: 'its bytes are not a PDF (no %PDF- header)', pages: 0 };
  const facts = pdfFacts(source.data);
  if (facts.encrypted) return { issue: 'the PDF is encrypted (password-protected); the API takes only standard, unencrypted PDFs', pages: facts.pages ?? 0 };
  return { pages: facts.pages ?? 0 };
}

/** One refused block: where it is (`messages.3.content.0.content.1`, the API's way of naming it) and why. */
export interface MediaIssue {
  path: string;
  issue: string;
}

type Found = { path: string; block: Record<string, unknown> };

function mediaBlocks(messages: readonly { content: unknown }[]): Found[] {
  const out: Found[] = [];
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    (m.content as Record<string, unknown>[]).forEach((b, j) => {
      if (b === null || typeof b !== 'object') return;
      if (b.type === 'image' || b.type === 'document') out.push({ path: `messages.${i}.content.${j}`, block: b });
      else if (b.type === 'tool_result' && Array.isArray(b.content)) {
        (b.content as Record<string, unknown>[]).forEach((c, k) => {
          if (c !== null && typeof c === 'object' && (c.type === 'image' || c.type === 'document')) out.push({ path: `messages.${i}.content.${j}.content.${k}`, block: c });
        });
      }
    });
  });
  return out;
}

/**
 * Every image and document of a request's messages the API would refuse, with the request's
 * own limits (more than 20 images; the PDF pages of the whole request against `window`).
 */
export function requestMediaIssues(messages: readonly { content: unknown }[], window = 200_000): MediaIssue[] {
  const found = mediaBlocks(messages);
  const many = found.filter((f) => f.block.type === 'image').length > MEDIA_LIMITS.manyImages;
  const issues: MediaIssue[] = [];
  let pages = 0;
  for (const f of found) {
    if (f.block.type === 'image') {
      const issue = imageIssue(f.block, many);
      if (issue) issues.push({ path: f.path, issue });
      continue;
    }
    const d = documentIssue(f.block);
    pages += d.pages;
    if (d.issue) issues.push({ path: f.path, issue: d.issue });
  }
  const maxPages = window > 200_000 ? MEDIA_LIMITS.maxPdfPagesLarge : MEDIA_LIMITS.maxPdfPages;
  if (pages > maxPages) issues.push({ path: 'messages', issue: `the request's PDFs hold ${pages} pages, more than the ${maxPages} one request takes on a ${fmt(window)}-token window` });
  return issues;
}

/** `issues` as one line for an error message. */
export function describeMediaIssues(issues: readonly MediaIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.issue}`).join('; ');
}
