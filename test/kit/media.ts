/**
 * Images and PDFs made in the tests (no binaries committed): a real PNG encoder over
 * node:zlib (noise pixels make a file of about the size asked for), JPEG, GIF and WebP files
 * whose headers say the size asked for (what the token rules and limits read), and plain
 * PDFs of N pages with a correct cross-reference table.
 */
import { deflateSync } from 'node:zlib';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A small deterministic generator, so a test's file is the same bytes every run. */
function noise(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) & 0xff;
  };
}

/**
 * A valid RGB PNG of `width` × `height`: flat grey, or (`noisy`) random pixels that do not
 * compress, so its size follows its pixel count (about 3 bytes a pixel).
 */
export function png(width: number, height: number, opts: { noisy?: boolean; seed?: number } = {}): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const row = width * 3 + 1;
  const raw = Buffer.alloc(row * height, 0x80);
  const next = noise(opts.seed ?? 7);
  for (let y = 0; y < height; y++) {
    raw[y * row] = 0; // filter: none
    if (opts.noisy) for (let x = 1; x < row; x++) raw[y * row + x] = next();
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: opts.noisy ? 0 : 6 })), chunk('IEND', Buffer.alloc(0))]);
}

/** A noisy PNG whose base64 is about `base64Chars` long (square-ish). */
export function pngOfBase64Size(base64Chars: number, seed = 7): Buffer {
  const pixels = Math.floor((base64Chars * 3) / 4 / 3);
  const width = Math.floor(Math.sqrt(pixels));
  return png(width, Math.floor(pixels / width), { noisy: true, seed });
}

/** A JPEG of `width` × `height` as far as its header goes: SOI, JFIF, an EXIF-sized APP1 (`exifBytes`), SOF0, a scan, EOI. */
export function jpeg(width: number, height: number, opts: { exifBytes?: number } = {}): Buffer {
  const segment = (marker: number, body: Buffer) => {
    const head = Buffer.from([0xff, marker, 0, 0]);
    head.writeUInt16BE(body.length + 2, 2);
    return Buffer.concat([head, body]);
  };
  const jfif = Buffer.from([0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const exif = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), Buffer.alloc(opts.exifBytes ?? 2000, 0x11)]);
  const sof = Buffer.alloc(15);
  sof[0] = 8;
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  sof[5] = 3;
  sof.set([1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1], 6);
  const sos = Buffer.from([3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3f, 0]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), segment(0xe0, jfif), segment(0xe1, exif), segment(0xc0, sof), segment(0xda, sos), Buffer.alloc(64, 0x55), Buffer.from([0xff, 0xd9])]);
}

/** A GIF89a of `width` × `height` (header, screen descriptor, one empty frame). */
export function gif(width: number, height: number): Buffer {
  const b = Buffer.alloc(13);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return Buffer.concat([b, Buffer.from([0x3b])]);
}

/** A WebP of `width` × `height` in the chunk form asked (`VP8X` extended, `VP8L` lossless, `VP8 ` lossy). */
export function webp(width: number, height: number, form: 'VP8X' | 'VP8L' | 'VP8 ' = 'VP8X'): Buffer {
  let body: Buffer;
  if (form === 'VP8X') {
    body = Buffer.alloc(10);
    body.writeUIntLE(width - 1, 4, 3);
    body.writeUIntLE(height - 1, 7, 3);
  } else if (form === 'VP8L') {
    body = Buffer.alloc(5);
    body[0] = 0x2f;
    body.writeUInt32LE(((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14), 1);
  } else {
    body = Buffer.alloc(10);
    body.set([0x9d, 0x01, 0x2a], 3);
    body.writeUInt16LE(width & 0x3fff, 6);
    body.writeUInt16LE(height & 0x3fff, 8);
  }
  const head = Buffer.alloc(8);
  head.write(form, 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(4 + head.length + body.length, 4);
  riff.write('WEBP', 8, 'latin1');
  return Buffer.concat([riff, head, body]);
}

/** A plain PDF of `pages` pages, each saying "Page N" (and `text` when given), with a correct xref table. */
export function pdf(pages: number, opts: { text?: (page: number) => string; encrypted?: boolean } = {}): Buffer {
  const objects: string[] = [];
  const kids: string[] = [];
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  for (let p = 1; p <= pages; p++) {
    const page = 2 + p * 2;
    const content = page + 1;
    kids.push(`${page} 0 R`);
    const line = `Page ${p}${opts.text ? ` ${opts.text(p)}` : ''}`.replace(/[()\\]/g, '');
    const stream = `BT /F1 24 Tf 72 720 Td (${line}) Tj ET`;
    objects[page] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${content} 0 R >>`;
    objects[content] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  }
  objects[2] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`;
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  for (let i = 1; i < objects.length; i++) {
    offsets[i] = Buffer.byteLength(out, 'latin1');
    out += `${i} 0 obj\n${objects[i]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let i = 1; i < objects.length; i++) out += `${String(offsets[i]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R${opts.encrypted ? ' /Encrypt << /Filter /Standard >>' : ''} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** `bytes` as a Messages image block. */
export function imageBlock(bytes: Buffer, mediaType = 'image/png'): { type: 'image'; source: { type: 'base64'; media_type: string; data: string } } {
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data: bytes.toString('base64') } };
}

/** `bytes` (a PDF) as a Messages document block. */
export function documentBlock(bytes: Buffer): { type: 'document'; source: { type: 'base64'; media_type: 'application/pdf'; data: string } } {
  return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: bytes.toString('base64') } };
}

/**
 * A PDF 1.5 of `pages` pages whose catalog, page tree and pages sit in a compressed object
 * stream, indexed by a compressed cross-reference stream (what most tools write today).
 */
export function packedPdf(pages: number): Buffer {
  const inStream: string[] = [];
  const kids: number[] = [];
  const contentOf = (p: number) => 2 + pages + p;
  inStream[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  for (let p = 1; p <= pages; p++) {
    kids.push(2 + p);
    inStream[2 + p] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${contentOf(p)} 0 R >>`;
  }
  inStream[2] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${pages} >>`;
  const nums = Object.keys(inStream).map(Number);
  let body = '';
  const header: string[] = [];
  for (const n of nums) {
    header.push(`${n} ${body.length}`);
    body += `${inStream[n]}\n`;
  }
  const first = `${header.join(' ')}\n`;
  const objStm = deflateSync(Buffer.from(first + body, 'latin1'));
  const objStmNum = 3 + 2 * pages;
  const xrefNum = objStmNum + 1;
  const parts: Buffer[] = [Buffer.from('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets = new Map<number, number>();
  const at = () => parts.reduce((n, b) => n + b.length, 0);
  for (let p = 1; p <= pages; p++) {
    const stream = `BT /F1 24 Tf 72 720 Td (Page ${p}) Tj ET`;
    offsets.set(contentOf(p), at());
    parts.push(Buffer.from(`${contentOf(p)} 0 obj\n<< /Length ${stream.length} >>\nstream\n${stream}\nendstream\nendobj\n`, 'latin1'));
  }
  offsets.set(objStmNum, at());
  parts.push(Buffer.from(`${objStmNum} 0 obj\n<< /Type /ObjStm /N ${nums.length} /First ${first.length} /Filter /FlateDecode /Length ${objStm.length} >>\nstream\n`, 'latin1'), objStm, Buffer.from('\nendstream\nendobj\n', 'latin1'));
  const xrefAt = at();
  const rows: Buffer[] = [];
  for (let n = 0; n <= xrefNum; n++) {
    const row = Buffer.alloc(7);
    if (n === 0) row.set([0, 0, 0, 0, 0, 0xff, 0xff]);
    else if (inStream[n] !== undefined) {
      row[0] = 2;
      row.writeUInt32BE(objStmNum, 1);
      row.writeUInt16BE(nums.indexOf(n), 5);
    } else {
      row[0] = 1;
      row.writeUInt32BE(n === xrefNum ? xrefAt : offsets.get(n)!, 1);
    }
    rows.push(row);
  }
  const xref = deflateSync(Buffer.concat(rows));
  parts.push(Buffer.from(`${xrefNum} 0 obj\n<< /Type /XRef /Size ${xrefNum + 1} /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length ${xref.length} >>\nstream\n`, 'latin1'), xref, Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}
