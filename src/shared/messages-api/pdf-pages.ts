/**
 * How many pages a PDF held as base64 has, read from its bytes without a PDF library: the
 * `/Count` of the newest page-tree root (a `/Type /Pages` object without a `/Parent`; an
 * incremental update, such as Read's page selection, appends a newer one), else the page
 * objects (`/Type /Page`) written in the open. A PDF that keeps its objects in compressed
 * object streams (PDF 1.5+) shows neither uncompressed; then the count is undefined and
 * callers fall back to an estimate by size. Whether it is encrypted
 * (`/Encrypt` in a trailer: the API refuses such files) is read the same way.
 * Workflow-safe: pure code, no Node builtins.
 */
import { Base64Bytes } from './image-size';

/** What a scan of a PDF's bytes found. */
export interface PdfFacts {
  /** Pages found as uncompressed page objects; undefined when none were (object streams). */
  pages?: number;
  encrypted: boolean;
  /** Decoded size in bytes. */
  bytes: number;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUE = (() => {
  const t = new Uint8Array(128).fill(255);
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i;
  return t;
})();

/** The bytes of `base64`, decoded in one pass (a whole document: faster than byte by byte). */
function decodeAll(base64: string): Uint8Array {
  const out = new Uint8Array(Math.floor((base64.length * 3) / 4));
  let n = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < base64.length; i++) {
    const c = base64.charCodeAt(i);
    const v = c < 128 ? VALUE[c]! : 255;
    if (v === 255) {
      if (c === 61 /* = */) break;
      continue; // whitespace a lenient encoder left
    }
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (acc >> bits) & 0xff;
    }
  }
  return out.subarray(0, n);
}

const isDelimiter = (b: number | undefined) => b === undefined || b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0x0c || b === 0x00 || b === 0x2f || b === 0x3e || b === 0x3c || b === 0x5b || b === 0x5d || b === 0x28 || b === 0x29;
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0x0c || b === 0x00;

function matchAt(bytes: Uint8Array, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** Counts `/Type /Page` (any spacing) whose name ends there, notes the page-tree nodes and an `/Encrypt` key. */
function scan(bytes: Uint8Array): { pages: number; trees: number[]; encrypted: boolean } {
  let pages = 0;
  const trees: number[] = [];
  let encrypted = false;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x2f) continue;
    if (matchAt(bytes, i, '/Type')) {
      let j = i + 5;
      while (isSpace(bytes[j])) j++;
      if (matchAt(bytes, j, '/Page') && isDelimiter(bytes[j + 5])) pages++;
      else if (matchAt(bytes, j, '/Pages') && isDelimiter(bytes[j + 6])) trees.push(i);
      i = j;
    } else if (!encrypted && matchAt(bytes, i, '/Encrypt') && isDelimiter(bytes[i + 8])) {
      encrypted = true;
    }
  }
  return { pages, trees, encrypted };
}

/** How far around a `/Type /Pages` its object is looked for. */
const OBJECT_WINDOW = 8192;

function latin1(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 4096) s += String.fromCharCode(...bytes.subarray(i, i + 4096));
  return s;
}

/** The `/Count` of the last page-tree root (a `/Pages` object without `/Parent`) in file order. */
function rootCount(bytes: Uint8Array, trees: number[]): number | undefined {
  for (let t = trees.length - 1; t >= 0; t--) {
    const at = trees[t]!;
    const before = latin1(bytes.subarray(Math.max(0, at - OBJECT_WINDOW), at));
    const after = latin1(bytes.subarray(at, at + OBJECT_WINDOW));
    const start = before.lastIndexOf(' obj');
    const end = after.indexOf('endobj');
    if (start < 0 || end < 0) continue;
    const object = before.slice(start) + after.slice(0, end);
    if (/\/Parent\b/.test(object)) continue;
    const count = /\/Count\s+(\d+)/.exec(object);
    if (count) return Number(count[1]);
  }
  return undefined;
}

/**
 * The page count and encryption of the PDF `base64` encodes.
 *
 * @example pdfFacts(threePagePdf) // { pages: 3, encrypted: false, bytes: 1843 }
 */
export function pdfFacts(base64: string): PdfFacts {
  const bytes = decodeAll(base64);
  const found = scan(bytes);
  const pages = rootCount(bytes, found.trees) ?? (found.pages > 0 ? found.pages : undefined);
  return { ...(pages !== undefined ? { pages } : {}), encrypted: found.encrypted, bytes: bytes.length };
}

/** Whether `base64` starts like a PDF (`%PDF-`). */
export function looksLikePdf(base64: string): boolean {
  const b = new Base64Bytes(base64.slice(0, 8));
  return [0x25, 0x50, 0x44, 0x46, 0x2d].every((c, i) => b.byte(i) === c);
}
