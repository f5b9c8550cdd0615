/**
 * What an image or a document block costs in input tokens, by each provider's published
 * rule, for the one estimate forkflow uses everywhere (request-tokens.ts: compaction
 * triggers, budget reservations, count_tokens decisions, snapshot compaction, cost) and for
 * the offline model's accounting, so the emulator charges what the API would.
 *
 * - Anthropic images (platform.claude.com/docs/en/build-with-claude/vision, "Evaluate image
 *   size" and "Calculate image costs"): an image whose long edge is over 1568 px, or that
 *   would cost over about 1,600 tokens, is first scaled down keeping its aspect ratio; then
 *   tokens = width × height / 750. The docs' own examples: 200×200 → 54, 1000×1000 → 1,334,
 *   1092×1092 → 1,590 (rounded up here, which gives exactly those).
 * - Anthropic PDFs (…/build-with-claude/pdf-support, "Estimate your costs"): each page costs
 *   its extracted text (1,500–3,000 tokens a page by the docs) plus the page as an image.
 *   Chosen: 1,500 text tokens (the low end: the docs' range is for dense pages, and near a
 *   limit count_tokens decides anyway) plus one image at the resize cap (1,600) = 3,100 a
 *   page. The pages are counted from the file (pdf-pages.ts); a file whose page objects are
 *   compressed is counted at one page per 50 KB (at least one).
 * - OpenAI `image_url` (platform.openai.com/docs/guides/images-vision, "Calculating costs"):
 *   `detail: low` costs 85; otherwise the image is fitted into 2048×2048, then scaled down so
 *   its short side is 768 px, and costs 85 + 170 per 512-px tile. The docs' examples:
 *   1024×1024 → 765, 2048×4096 → 1,105, low → 85.
 *
 * An image whose size cannot be read (a URL or file source, a cut header) is charged the
 * provider's most for one image. Workflow-safe: pure code.
 */
import { imageInfo } from './image-size';
import { pdfFacts } from './pdf-pages';
import { canonicalJson, utf8Length } from '../base/hash';

/**
 * Which provider's rules count media: `anthropic` (the Messages API), `openai` (Chat
 * Completions `image_url`), or `bytes`: the estimate before this module (a block's JSON
 * bytes / 4), which workflows use for messages that hold no media.
 */
export type MediaRules = 'anthropic' | 'openai' | 'bytes';

/** Anthropic's image rule: the long edge and token cap above which an image is scaled down. */
export const ANTHROPIC_IMAGE = Object.freeze({ maxLongEdge: 1568, maxTokens: 1600, pixelsPerToken: 750 });
/** OpenAI's tile rule. */
export const OPENAI_IMAGE = Object.freeze({ baseTokens: 85, tileTokens: 170, tile: 512, fitInto: 2048, shortSide: 768 });
/** The chosen PDF page estimate: text tokens a page, and one page image at Anthropic's cap. */
export const PDF_PAGE = Object.freeze({ textTokens: 1500, imageTokens: ANTHROPIC_IMAGE.maxTokens, unknownPageBytes: 50 * 1024 });

/** The size Anthropic scales `width` × `height` to (unchanged when within its limits). */
export function anthropicResize(width: number, height: number): { width: number; height: number } {
  const { maxLongEdge, maxTokens, pixelsPerToken } = ANTHROPIC_IMAGE;
  const scale = Math.min(1, maxLongEdge / Math.max(width, height), Math.sqrt((maxTokens * pixelsPerToken) / (width * height)));
  if (scale >= 1) return { width, height };
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
}

/**
 * Tokens of a `width` × `height` image on the Messages API.
 *
 * @example anthropicImageTokens(1000, 1000) // 1334
 */
export function anthropicImageTokens(width: number, height: number): number {
  const r = anthropicResize(width, height);
  return Math.ceil((r.width * r.height) / ANTHROPIC_IMAGE.pixelsPerToken);
}

/**
 * Tokens of a `width` × `height` image on Chat Completions, at `detail` (default `auto`, costed as `high`).
 *
 * @example openaiImageTokens(2048, 4096) // 1105
 */
export function openaiImageTokens(width: number, height: number, detail?: string): number {
  const { baseTokens, tileTokens, tile, fitInto, shortSide } = OPENAI_IMAGE;
  if (detail === 'low') return baseTokens;
  let w = width;
  let h = height;
  const fit = Math.min(1, fitInto / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shrink = Math.min(1, shortSide / Math.min(w, h));
  w = Math.floor(w * shrink);
  h = Math.floor(h * shrink);
  return baseTokens + tileTokens * Math.ceil(w / tile) * Math.ceil(h / tile);
}

/** The most one image can cost under `rules` (an image whose size is unknown is charged this). */
export function maxImageTokens(rules: Exclude<MediaRules, 'bytes'>): number {
  // OpenAI's worst shape after fitting: 2048 × 768, 4 × 2 tiles.
  return rules === 'openai' ? OPENAI_IMAGE.baseTokens + OPENAI_IMAGE.tileTokens * 8 : ANTHROPIC_IMAGE.maxTokens;
}

/** Tokens of `pages` PDF pages by the chosen estimate. */
export function pdfPageTokens(pages: number): number {
  return pages * (PDF_PAGE.textTokens + PDF_PAGE.imageTokens);
}

type Source = { type?: unknown; media_type?: unknown; data?: unknown; content?: unknown };

function sourceOf(block: Record<string, unknown>): Source {
  const s = block.source;
  return s !== null && typeof s === 'object' ? (s) : {};
}

/** The pages a base64 PDF is charged for (counted, or by size when its page objects are compressed). */
export function pdfPagesOf(base64: string): number {
  const facts = pdfFacts(base64);
  return facts.pages ?? Math.max(1, Math.ceil(facts.bytes / PDF_PAGE.unknownPageBytes));
}

/**
 * Pages by source object: a conversation's blocks are estimated again and again (each turn's
 * check, compaction), and counting decodes the whole file. Keyed by the object, so a memo
 * never outlives its block and never answers for different bytes.
 */
const pagesMemo = new WeakMap<object, number>();

function pagesOfSource(source: Source & { data: string }): number {
  let pages = pagesMemo.get(source);
  if (pages === undefined) {
    pages = pdfPagesOf(source.data);
    pagesMemo.set(source, pages);
  }
  return pages;
}

function imageTokens(block: Record<string, unknown>, rules: Exclude<MediaRules, 'bytes'>): number {
  const source = sourceOf(block);
  const info = source.type === 'base64' && typeof source.data === 'string' ? imageInfo(source.data) : undefined;
  if (!info) return maxImageTokens(rules);
  return rules === 'openai' ? openaiImageTokens(info.width, info.height, typeof block.detail === 'string' ? block.detail : undefined) : anthropicImageTokens(info.width, info.height);
}

const textTokens = (text: string) => Math.ceil(utf8Length(text) / 4);

function documentTokens(block: Record<string, unknown>, rules: Exclude<MediaRules, 'bytes'>): number {
  const source = sourceOf(block);
  // Its title and context are text the model reads too.
  const extra = (typeof block.title === 'string' ? textTokens(block.title) : 0) + (typeof block.context === 'string' ? textTokens(block.context) : 0);
  if (source.type === 'text' && typeof source.data === 'string') return extra + textTokens(source.data);
  if (source.type === 'content') {
    const parts = typeof source.content === 'string' ? [{ type: 'text', text: source.content }] : Array.isArray(source.content) ? (source.content as Record<string, unknown>[]) : [];
    return extra + parts.reduce((n, p) => n + (mediaTokens(p, rules) ?? textTokens(canonicalJson(p))), 0);
  }
  if (source.type === 'base64' && typeof source.data === 'string') return extra + pdfPageTokens(pagesOfSource(source as Source & { data: string }));
  // A URL or a file: its pages are not known here; one page.
  return extra + pdfPageTokens(1);
}

/**
 * Tokens of `block` when it is an image or a document (nested ones of a tool result's
 * content counted too, the rest of it as JSON text); undefined for any other block, and
 * for every block under `bytes` rules (the caller counts its JSON).
 */
export function mediaTokens(block: Record<string, unknown>, rules: MediaRules): number | undefined {
  if (rules === 'bytes') return undefined;
  switch (block.type) {
    case 'image':
      return imageTokens(block, rules);
    case 'document':
      return documentTokens(block, rules);
    case 'tool_result': {
      if (!Array.isArray(block.content) || !block.content.some(isMedia)) return undefined;
      const inner = block.content as Record<string, unknown>[];
      const rest = { ...block, content: inner.filter((b) => !isMedia(b)) };
      return textTokens(canonicalJson(rest)) + inner.reduce((n, b) => n + (isMedia(b) ? mediaTokens(b, rules)! : 0), 0);
    }
    default:
      return undefined;
  }
}

/** Whether `b` is an image or document block. */
export function isMedia(b: unknown): b is Record<string, unknown> {
  if (b === null || typeof b !== 'object') return false;
  const t = (b as { type?: unknown }).type;
  return t === 'image' || t === 'document';
}

/** Whether any of `blocks` (or a tool result's content among them) is an image or a document. */
export function holdsMedia(blocks: readonly unknown[]): boolean {
  return blocks.some((b) => isMedia(b) || (b !== null && typeof b === 'object' && (b as { type?: unknown }).type === 'tool_result' && Array.isArray((b as { content?: unknown }).content) && ((b as { content: unknown[] }).content).some(isMedia)));
}
