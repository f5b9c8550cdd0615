/**
 * The pixel size and real format of an image held as base64 (a Messages `image` block's
 * data), read from its header alone: PNG's IHDR, JPEG's SOF marker (found by walking the
 * segments, so a large EXIF or ICC block before it costs a few reads, not a decode), GIF's
 * logical screen, WebP's VP8 / VP8L / VP8X chunk. Only the bytes asked for are decoded
 * (four base64 characters give three bytes), so a 5 MB screenshot costs a handful of
 * lookups. Workflow-safe: no Node builtins (no Buffer, no atob), no I/O.
 *
 * Why not a library: `image-size` (the usual choice) wants the decoded bytes whole, and its
 * package entry imports `node:fs`; the four headers are short and fixed by their specs.
 */

/** The formats the Messages API takes (its media types). */
export type ImageFormat = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export interface ImageInfo {
  format: ImageFormat;
  width: number;
  height: number;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUES: Int16Array = (() => {
  const t = new Int16Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i;
  // The URL-safe alphabet's two, accepted too (a lenient reader; the API wants standard).
  t['-'.charCodeAt(0)] = 62;
  t['_'.charCodeAt(0)] = 63;
  return t;
})();

/**
 * Random access to the bytes a base64 string encodes, decoding only the groups read.
 * `byte(i)` is -1 past the end or at an invalid character.
 */
export class Base64Bytes {
  /** How many bytes the string encodes (padding accounted for). */
  readonly length: number;

  constructor(private readonly data: string) {
    let pad = 0;
    if (data.endsWith('==')) pad = 2;
    else if (data.endsWith('=')) pad = 1;
    this.length = Math.floor(data.length / 4) * 3 + ((data.length % 4) * 3) / 4 - pad;
    this.length = Math.max(0, Math.floor(this.length));
  }

  byte(i: number): number {
    if (i < 0 || i >= this.length) return -1;
    const group = Math.floor(i / 3) * 4;
    const v = (k: number): number => {
      const c = this.data.charCodeAt(group + k);
      if (Number.isNaN(c) || c === 61 /* = */) return 0;
      return c < 128 ? VALUES[c]! : -1;
    };
    const a = v(0);
    const b = v(1);
    const c = v(2);
    const d = v(3);
    if (a < 0 || b < 0 || c < 0 || d < 0) return -1;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    return (n >> (16 - 8 * (i % 3))) & 0xff;
  }

  /** Bytes [from, from + n), or undefined when any is missing. */
  bytes(from: number, n: number): number[] | undefined {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const b = this.byte(from + i);
      if (b < 0) return undefined;
      out.push(b);
    }
    return out;
  }

  /** Decodes `[from, to)` at once (for scans of a whole document); invalid characters stop it early. */
  slice(from: number, to: number): Uint8Array {
    const end = Math.min(to, this.length);
    const out = new Uint8Array(Math.max(0, end - from));
    let n = 0;
    for (let i = from; i < end; i++) {
      const b = this.byte(i);
      if (b < 0) return out.subarray(0, n);
      out[n++] = b;
    }
    return out;
  }
}

const be16 = (b: number[], i: number) => (b[i]! << 8) | b[i + 1]!;
const be32 = (b: number[], i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!;
const le16 = (b: number[], i: number) => b[i]! | (b[i + 1]! << 8);
const le24 = (b: number[], i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);

function starts(b: Base64Bytes, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (b.byte(at + i) !== text.charCodeAt(i)) return false;
  return true;
}

function png(b: Base64Bytes): ImageInfo | undefined {
  // Signature (8), IHDR length (4), "IHDR" (4), width (4), height (4).
  const h = b.bytes(0, 24);
  if (!h || !starts(b, 12, 'IHDR')) return undefined;
  return { format: 'image/png', width: be32(h, 16), height: be32(h, 20) };
}

function gif(b: Base64Bytes): ImageInfo | undefined {
  const h = b.bytes(0, 10);
  return h ? { format: 'image/gif', width: le16(h, 6), height: le16(h, 8) } : undefined;
}

/** Start-of-frame markers (every coding process), which carry the frame's size. */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
/** Segments a JPEG may hold before its frame, at most (a hostile file could loop otherwise). */
const MAX_JPEG_SEGMENTS = 1_000;

function jpeg(b: Base64Bytes): ImageInfo | undefined {
  let at = 2;
  for (let n = 0; n < MAX_JPEG_SEGMENTS; n++) {
    // Fill bytes (0xFF) may precede a marker.
    while (b.byte(at) === 0xff && b.byte(at + 1) === 0xff) at++;
    if (b.byte(at) !== 0xff) return undefined;
    const marker = b.byte(at + 1);
    if (marker < 0) return undefined;
    // Markers without a length: TEM, RSTn.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // end of image / start of scan before any frame
    const seg = b.bytes(at + 2, 2);
    if (!seg) return undefined;
    const length = be16(seg, 0);
    if (length < 2) return undefined;
    if (SOF.has(marker)) {
      // length (2), precision (1), height (2), width (2).
      const f = b.bytes(at + 4, 5);
      return f ? { format: 'image/jpeg', width: be16(f, 3), height: be16(f, 1) } : undefined;
    }
    at += 2 + length;
  }
  return undefined;
}

function webp(b: Base64Bytes): ImageInfo | undefined {
  if (!starts(b, 8, 'WEBP')) return undefined;
  if (starts(b, 12, 'VP8X')) {
    // Chunk header (8), flags (4), then canvas width - 1 and height - 1, 24 bits each.
    const h = b.bytes(24, 6);
    return h ? { format: 'image/webp', width: le24(h, 0) + 1, height: le24(h, 3) + 1 } : undefined;
  }
  if (starts(b, 12, 'VP8L')) {
    // Signature 0x2f, then 14 bits width - 1, 14 bits height - 1.
    const h = b.bytes(20, 5);
    if (!h || h[0] !== 0x2f) return undefined;
    const bits = (h[1]! | (h[2]! << 8) | (h[3]! << 16) | (h[4]! << 24)) >>> 0;
    return { format: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (starts(b, 12, 'VP8 ')) {
    // Frame tag (3), start code 9d 01 2a, then 14-bit width and height (2 scale bits each).
    const f = b.bytes(20, 10);
    if (!f || f[3] !== 0x9d || f[4] !== 0x01 || f[5] !== 0x2a) return undefined;
    return { format: 'image/webp', width: le16(f, 6) & 0x3fff, height: le16(f, 8) & 0x3fff };
  }
  return undefined;
}

/**
 * The format and size of the image `base64` encodes, from its own bytes (whatever the block's
 * `media_type` says); undefined when it is none of the four formats or its header is cut.
 *
 * @example imageInfo(pngBase64) // { format: 'image/png', width: 1280, height: 800 }
 */
export function imageInfo(base64: string): ImageInfo | undefined {
  const b = new Base64Bytes(base64);
  const first = b.byte(0);
  const second = b.byte(1);
  let info: ImageInfo | undefined;
  if (first === 0x89 && starts(b, 1, 'PNG\r\n\x1a\n')) info = png(b);
  else if (first === 0xff && second === 0xd8) info = jpeg(b);
  else if (starts(b, 0, 'GIF8')) info = gif(b);
  else if (starts(b, 0, 'RIFF')) info = webp(b);
  return info && info.width > 0 && info.height > 0 ? info : undefined;
}
