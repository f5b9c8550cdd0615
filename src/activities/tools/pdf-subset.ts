/**
 * Some pages of a PDF (Read's `pages`, e.g. "1-3"), without a PDF library: the file is kept
 * byte for byte and an incremental update is appended (PDF 32000-1, 7.5.6) that writes the
 * page tree's root again with only the chosen pages in `/Kids`. Every reader follows the
 * newest cross-reference section, so the file then has those pages; each page keeps its
 * `/Parent`, so what it inherits (resources, media box) is unchanged. Both cross-reference
 * forms are read (a table, or a stream, compressed object streams included) and the update
 * is written in the form the file ends with.
 *
 * Why not pdf-lib: it would re-serialise the whole document (and is not a dependency here);
 * this is the smallest change a PDF allows, and the model reads the same bytes it would have.
 */
import { inflateSync } from 'node:zlib';

type Ref = { num: number; gen: number };
type Where = { offset: number; gen: number } | { stream: number; index: number };

/** The page numbers `spec` names ("3", "1-3", "2,5-7"), 1-based, in order, each once. */
export function parsePages(spec: string, total: number): number[] | string {
  const out: number[] = [];
  for (const part of spec.split(',').map((p) => p.trim())) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return `pages "${spec}" is not a page list like "1-3" or "2,5-7"`;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1 || to < from) return `pages "${part}" is not a range of pages from 1`;
    if (to > total) return `pages "${part}" is past the end: the PDF has ${total} page${total === 1 ? '' : 's'}`;
    for (let p = from; p <= to; p++) if (!out.includes(p)) out.push(p);
  }
  return out;
}

class Pdf {
  readonly text: string;
  readonly where = new Map<number, Where>();
  trailer = '';
  lastXref = 0;
  lastIsStream = false;
  private streams = new Map<number, { first: number; body: string; offsets: number[] }>();

  constructor(readonly bytes: Buffer) {
    this.text = bytes.toString('latin1');
    const at = this.text.lastIndexOf('startxref');
    if (at < 0) throw new Error('it has no cross-reference table (startxref)');
    this.lastXref = Number(/startxref\s+(\d+)/.exec(this.text.slice(at))?.[1]);
    const seen = new Set<number>();
    for (let offset: number | undefined = this.lastXref; offset !== undefined && !seen.has(offset); ) {
      seen.add(offset);
      offset = this.section(offset, seen.size === 1);
    }
  }

  /** Reads one cross-reference section (older entries never override newer ones); returns its /Prev. */
  private section(offset: number, newest: boolean): number | undefined {
    if (this.text.startsWith('xref', offset)) {
      const end = this.text.indexOf('trailer', offset);
      const lines = this.text.slice(offset + 4, end).trim().split(/\r?\n|\r/);
      for (let i = 0; i < lines.length; ) {
        const [start, count] = lines[i]!.trim().split(/\s+/).map(Number);
        for (let k = 0; k < count!; k++) {
          const [off, gen, kind] = lines[i + 1 + k]!.trim().split(/\s+/);
          if (kind === 'n' && !this.where.has(start! + k)) this.where.set(start! + k, { offset: Number(off), gen: Number(gen) });
        }
        i += 1 + count!;
      }
      const trailer = dictAt(this.text, this.text.indexOf('<<', end));
      if (newest) this.trailer = trailer;
      const stm = /\/XRefStm\s+(\d+)/.exec(trailer);
      if (stm) this.section(Number(stm[1]), false);
      return num(trailer, 'Prev');
    }
    const { dict, data } = this.streamAt(offset);
    if (!/\/Type\s*\/XRef/.test(dict)) throw new Error('its startxref does not point at a cross-reference section');
    if (newest) {
      this.trailer = dict;
      this.lastIsStream = true;
    }
    const w = (/\/W\s*\[([^\]]*)\]/.exec(dict)?.[1] ?? '').trim().split(/\s+/).map(Number);
    const index = (/\/Index\s*\[([^\]]*)\]/.exec(dict)?.[1] ?? `0 ${num(dict, 'Size')}`).trim().split(/\s+/).map(Number);
    const row = w[0]! + w[1]! + w[2]!;
    let at = 0;
    for (let i = 0; i < index.length; i += 2) {
      for (let k = 0; k < index[i + 1]!; k++, at += row) {
        const field = (n: number, from: number) => {
          let v = 0;
          for (let j = 0; j < n; j++) v = v * 256 + data[at + from + j]!;
          return v;
        };
        const type = w[0] === 0 ? 1 : field(w[0]!, 0);
        const a = field(w[1]!, w[0]!);
        const b = field(w[2]!, w[0]! + w[1]!);
        const n = index[i]! + k;
        if (this.where.has(n)) continue;
        if (type === 1) this.where.set(n, { offset: a, gen: b });
        else if (type === 2) this.where.set(n, { stream: a, index: b });
      }
    }
    return num(dict, 'Prev');
  }

  /** The stream object at `offset`: its dictionary and its decoded data. */
  private streamAt(offset: number): { dict: string; data: Buffer } {
    const open = this.text.indexOf('<<', offset);
    const dict = dictAt(this.text, open);
    let start = this.text.indexOf('stream', open + dict.length) + 6;
    if (this.text[start] === '\r') start++;
    if (this.text[start] === '\n') start++;
    const length = num(dict, 'Length');
    const end = length !== undefined && !/\/Length\s+\d+\s+\d+\s+R/.test(dict) ? start + length : this.text.indexOf('endstream', start);
    let data = this.bytes.subarray(start, end);
    if (/\/FlateDecode/.test(dict)) data = inflateSync(data);
    const predictor = num(dict, 'Predictor');
    if (predictor !== undefined && predictor >= 10) data = unPng(data, num(dict, 'Columns') ?? 1);
    return { dict, data };
  }

  /** Object `n`'s text (its dictionary, for the objects read here). */
  object(n: number): string {
    const w = this.where.get(n);
    if (!w) throw new Error(`object ${n} is missing`);
    if ('offset' in w) return dictAt(this.text, this.text.indexOf('<<', w.offset));
    let s = this.streams.get(w.stream);
    if (!s) {
      const loc = this.where.get(w.stream);
      if (!loc || !('offset' in loc)) throw new Error(`object stream ${w.stream} is missing`);
      const { dict, data } = this.streamAt(loc.offset);
      const body = data.toString('latin1');
      const first = num(dict, 'First') ?? 0;
      const head = body.slice(0, first).trim().split(/\s+/).map(Number);
      s = { first, body, offsets: head.filter((_, i) => i % 2 === 1) };
      this.streams.set(w.stream, s);
    }
    const from = s.first + s.offsets[w.index]!;
    return dictAt(s.body, s.body.indexOf('<<', from));
  }
}

/** PNG-predicted rows (the Up filter xref streams use, and the others) back to raw bytes. */
function unPng(data: Buffer, columns: number): Buffer {
  const row = columns + 1;
  const out = Buffer.alloc((data.length / row) * columns);
  for (let r = 0; r * row < data.length; r++) {
    const filter = data[r * row]!;
    for (let c = 0; c < columns; c++) {
      const raw = data[r * row + 1 + c]!;
      const left = c > 0 ? out[r * columns + c - 1]! : 0;
      const up = r > 0 ? out[(r - 1) * columns + c]! : 0;
      const ul = r > 0 && c > 0 ? out[(r - 1) * columns + c - 1]! : 0;
      const p = left + up - ul;
      const paeth = Math.abs(p - left) <= Math.abs(p - up) && Math.abs(p - left) <= Math.abs(p - ul) ? left : Math.abs(p - up) <= Math.abs(p - ul) ? up : ul;
      const add = [0, left, up, (left + up) >> 1, paeth][filter] ?? 0;
      out[r * columns + c] = (raw + add) & 0xff;
    }
  }
  return out;
}

/** The dictionary `<< … >>` that starts at `at`, nested ones and strings included. */
function dictAt(text: string, at: number): string {
  if (at < 0) throw new Error('a dictionary is missing');
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === '(') {
      // A literal string: skip to its end (balanced parentheses, escapes).
      let d = 1;
      for (i++; i < text.length && d > 0; i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '(') d++;
        else if (text[i] === ')') d--;
      }
      i--;
    } else if (c === '<' && text[i + 1] === '<') {
      depth++;
      i++;
    } else if (c === '>' && text[i + 1] === '>') {
      depth--;
      i++;
      if (depth === 0) return text.slice(at, i + 1);
    }
  }
  throw new Error('a dictionary does not end');
}

function num(dict: string, key: string): number | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+)`).exec(dict);
  return m ? Number(m[1]) : undefined;
}

function refOf(dict: string, key: string): Ref | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+)\\s+(\\d+)\\s+R`).exec(dict);
  return m ? { num: Number(m[1]), gen: Number(m[2]) } : undefined;
}

/** Leaf page references in document order (a page tree of any depth; a loop is cut). */
function leafPages(pdf: Pdf, root: Ref): Ref[] {
  const out: Ref[] = [];
  const seen = new Set<number>();
  const walk = (ref: Ref): void => {
    if (seen.has(ref.num)) return;
    seen.add(ref.num);
    const dict = pdf.object(ref.num);
    if (/\/Type\s*\/Pages\b/.test(dict)) {
      const kids = /\/Kids\s*\[([^\]]*)\]/.exec(dict)?.[1];
      if (kids === undefined) throw new Error('its page tree keeps /Kids elsewhere than inline');
      for (const m of kids.matchAll(/(\d+)\s+(\d+)\s+R/g)) walk({ num: Number(m[1]), gen: Number(m[2]) });
    } else out.push(ref);
  };
  walk(root);
  return out;
}

/**
 * `bytes` with only the pages `spec` names, and how many it had; or why not (a page list
 * that does not parse or runs past the end, a file this cannot read).
 */
export function selectPages(bytes: Buffer, spec: string): { ok: true; pdf: Buffer; total: number } | { ok: false; message: string } {
  let pdf: Pdf;
  let root: Ref;
  let pages: Ref[];
  try {
    pdf = new Pdf(bytes);
    const catalog = refOf(pdf.trailer, 'Root');
    if (!catalog) throw new Error('its trailer names no /Root');
    const pagesRef = refOf(pdf.object(catalog.num), 'Pages');
    if (!pagesRef) throw new Error('its catalog names no /Pages');
    root = pagesRef;
    pages = leafPages(pdf, root);
  } catch (err) {
    return { ok: false, message: `its pages cannot be selected (${err instanceof Error ? err.message : String(err)}); Read it whole, or split it with qpdf in Bash` };
  }
  const picked = parsePages(spec, pages.length);
  if (typeof picked === 'string') return { ok: false, message: picked };
  const rootDict = pdf.object(root.num);
  const kids = picked.map((p) => `${pages[p - 1]!.num} ${pages[p - 1]!.gen} R`).join(' ');
  const newRoot = rootDict.replace(/\/Kids\s*\[[^\]]*\]/, `/Kids [${kids}]`).replace(/\/Count\s+\d+/, `/Count ${picked.length}`);
  const size = Math.max(num(pdf.trailer, 'Size') ?? 0, ...pdf.where.keys()) + 1;
  const id = /\/ID\s*\[[^\]]*\]/.exec(pdf.trailer)?.[0] ?? '';
  const head = bytes[bytes.length - 1] === 0x0a ? '' : '\n';
  const rootAt = bytes.length + head.length;
  const rootObj = `${root.num} ${root.gen} obj\n${newRoot}\nendobj\n`;
  const xrefAt = rootAt + Buffer.byteLength(rootObj, 'latin1');
  const common = `/Root ${refOf(pdf.trailer, 'Root')!.num} ${refOf(pdf.trailer, 'Root')!.gen} R /Prev ${pdf.lastXref}${id ? ` ${id}` : ''}`;
  let tail: Buffer;
  if (pdf.lastIsStream) {
    // An xref stream (uncompressed rows of 1 + 4 + 2 bytes): the root, and the stream itself.
    const rows = Buffer.alloc(14);
    rows[0] = 1;
    rows.writeUInt32BE(rootAt, 1);
    rows.writeUInt16BE(root.gen, 5);
    rows[7] = 1;
    rows.writeUInt32BE(xrefAt, 8);
    rows.writeUInt16BE(0, 12);
    const dict = `<< /Type /XRef /Size ${size + 1} /W [1 4 2] /Index [${root.num} 1 ${size} 1] ${common} /Length ${rows.length} >>`;
    tail = Buffer.concat([Buffer.from(`${size} 0 obj\n${dict}\nstream\n`, 'latin1'), rows, Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1')]);
  } else {
    const entry = `${String(rootAt).padStart(10, '0')} ${String(root.gen).padStart(5, '0')} n \n`;
    tail = Buffer.from(`xref\n0 1\n0000000000 65535 f \n${root.num} 1\n${entry}trailer\n<< /Size ${size} ${common} >>\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1');
  }
  return { ok: true, pdf: Buffer.concat([bytes, Buffer.from(head + rootObj, 'latin1'), tail]), total: pages.length };
}
