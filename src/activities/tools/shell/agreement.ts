/**
 * Parser agreement: the classifier judges tree-sitter-bash's tree, so that tree must be
 * what bash runs. tree-sitter-bash mis-reads some inputs (ANSI-C strings with escapes,
 * words joined by a line continuation, words glued to a redirect), so every command is
 * parsed a second time by an independent parser, mvdan/sh (sh-syntax), and refused
 * unless both read the same structure.
 *
 * sh-syntax only reports a file's top-level statements, so the comparison is done list by
 * list (agreement-shape.ts): every statement list tree-sitter finds (the whole command,
 * each pipeline element, each substitution or group body) is handed to sh-syntax as its
 * own text, and the statements sh-syntax reports (start, command extent, `;`/`&`, `!`,
 * redirects with their words and parts) must equal tree-sitter's. Then every word
 * tree-sitter found is handed to sh-syntax as a redirect target (`> WORD`, one per line,
 * all in one call), and sh-syntax must read exactly that text as one word with the same
 * parts. A quote or escape read differently moves a statement, word or part boundary, and
 * the command is refused. Any ERROR or MISSING node, any sh-syntax syntax error and any
 * construct the shape reader does not model is refused too (fail closed).
 */
import type { Node } from 'web-tree-sitter';
import { ShapeReader } from './agreement-reader';
import { Unsupported, type ListShape, type RedirShape, type Span, type StmtShape, type WordShape } from './agreement-shape';
import { deny } from './deny';
import { loadShSyntax, shParseLoaded, type ShPos, type ShStmt, type ShWord } from './sh-syntax';

/** Why two shapes differ, or null when they agree. */
type Verdict = string | null;

/** A command the check refuses: unparsable, not modelled, or read differently. */
export interface Disagreement {
  kind: 'syntax' | 'unsupported' | 'disagree';
  detail: string;
}

const SIMPLIFY = 'simplify its quoting';

function clip(text: string): string {
  const one = JSON.stringify(text);
  return one.length > 60 ? `${one.slice(0, 57)}…"` : one;
}

/** Maps sh-syntax's UTF-8 byte offsets in `text` to string indices. */
function byteIndex(text: string): (offset: number) => number {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return (offset) => offset;
  const map: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const code = text.codePointAt(i)!;
    const bytes = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    for (let b = 0; b < bytes; b++) map.push(i);
    if (code >= 0x10000) i++;
  }
  map.push(text.length);
  return (offset) => map[offset] ?? -1;
}

/** The kind of a word part, told from its first characters (the same rule for both parsers). */
function partKind(text: string, at: number): string {
  const s = text.slice(at, at + 3);
  if (s.startsWith("$'")) return 'ansi-c';
  if (s.startsWith('$"')) return 'locale';
  if (s.startsWith("'")) return 'single';
  if (s.startsWith('"')) return 'double';
  if (s.startsWith('$((') || s.startsWith('$[')) return 'arith';
  if (s.startsWith('$(')) return 'subst';
  if (s.startsWith('${') || /^\$[A-Za-z0-9_@*#?$!-]/.test(s)) return 'param';
  if (s.startsWith('`')) return 'backquote';
  if (s.startsWith('<(') || s.startsWith('>(')) return 'procsubst';
  return 'literal';
}

/** Where a position lands in the text sh-syntax was given. */
type Place = (position: number) => number;

/** Parts as `kind@start-end`, adjacent literal runs merged (the parsers split literals differently). */
function normalParts(text: string, parts: readonly Span[], shift: Place): string {
  const out: Array<{ kind: string; start: number; end: number }> = [];
  for (const part of parts) {
    const kind = partKind(text, part.start);
    const last = out[out.length - 1];
    if (last && kind === 'literal' && last.kind === 'literal' && last.end === part.start) last.end = part.end;
    // tree-sitter splits `$"…"` into `$` and a double-quoted string: one locale string.
    else if (last && kind === 'double' && last.kind === 'locale' && last.end === last.start + 1 && last.end === part.start) last.end = part.end;
    else out.push({ kind, start: part.start, end: part.end });
  }
  return out.map((p) => `${p.kind}@${shift(p.start)}-${shift(p.end)}`).join(',');
}

function wordText(text: string, word: WordShape | null, shift: Place): string {
  return word ? `${shift(word.start)}-${shift(word.end)}[${normalParts(text, word.parts, shift)}]` : '-';
}

function redirText(text: string, r: RedirShape, shift: Place): string {
  // Only where the body ends: tree-sitter starts a body after its leading empty lines.
  const hdoc = r.hdoc ? ` hdoc to ${shift(r.hdoc.end)}` : '';
  return `${shift(r.at)}:${r.fd}${r.op}${wordText(text, r.word, shift)}${hdoc}`;
}

/** One statement as a comparable line; positions relative to the list's text. */
function stmtText(text: string, s: StmtShape, shift: Place): string {
  // With `!`, sh-syntax reports the command as starting at the `!`: compare only its end.
  const cmd = s.cmd ? `${s.negated ? '' : shift(s.cmd.start)}-${shift(s.cmd.end)}` : 'none';
  const semi = s.semicolon === null ? '' : ` ${s.background ? '&' : ';'}@${shift(s.semicolon)}`;
  return `stmt@${shift(s.start)} cmd ${cmd}${s.negated ? ' !' : ''}${semi} redirs [${s.redirs.map((r) => redirText(text, r, shift)).join(' ')}]`;
}

/**
 * mvdan/sh ends a word that is followed by a line continuation after the `\\` and newline;
 * tree-sitter ends it before. Move such an end back over the continuations (a backslash
 * that is itself escaped does not continue the line).
 */
function beforeContinuations(text: string, end: number): number {
  let at = end;
  while (at >= 2 && text[at - 1] === '\n' && text[at - 2] === '\\') {
    let slashes = 0;
    while (text[at - 2 - slashes] === '\\') slashes++;
    if (slashes % 2 === 0) break;
    at -= 2;
  }
  return at;
}

/** sh-syntax's statements in the same terms as tree-sitter's. */
function fromSh(text: string, stmts: readonly ShStmt[]): StmtShape[] {
  const index = byteIndex(text);
  const at = (p: ShPos): number => beforeContinuations(text, index(p.Offset));
  // A start that mvdan/sh puts on a line continuation: the token starts after it.
  const from = (p: ShPos): number => {
    let i = index(p.Offset);
    while (text.startsWith('\\\n', i)) i += 2;
    return i;
  };
  const valid = (p: ShPos): boolean => p.Line > 0;
  const word = (w: ShWord | null): WordShape | null =>
    w ? { start: from(w.Pos), end: at(w.End), parts: (w.Parts ?? []).map((p) => ({ start: from(p.Pos), end: at(p.End) })) } : null;
  return stmts.map((s) => ({
    start: from(s.Position),
    cmd: s.Cmd ? { start: from(s.Cmd.Pos), end: at(s.Cmd.End) } : null,
    semicolon: valid(s.Semicolon) ? from(s.Semicolon) : null,
    negated: s.Negated,
    background: s.Background,
    redirs: (s.Redirs ?? []).map((r) => ({
      at: from(r.Pos),
      op: r.Op,
      fd: r.N?.Value ?? '',
      word: word(r.Word),
      hdoc: r.Hdoc ? { start: from(r.Hdoc.Pos), end: at(r.Hdoc.End) } : null,
    })),
  }));
}

function compareList(source: string, list: ListShape): Verdict {
  const head = source.slice(list.start, list.end);
  const tail = list.tail;
  const text = tail ? head + source.slice(tail.start, tail.end) : head;
  const place: Place = (p) => (tail && p >= tail.start ? p - tail.start + head.length : p - list.start);
  const same: Place = (p) => p;
  const parsed = shParseLoaded(text);
  if (!parsed.ok) return `sh-syntax cannot parse ${clip(text)} on its own (${parsed.error})`;
  if (parsed.stmts.some((s) => s.Coprocess)) return `sh-syntax reads a coprocess in ${clip(text)}`;
  const theirs = fromSh(text, parsed.stmts).map((s) => stmtText(text, s, same));
  const ours = list.stmts.map((s) => stmtText(source, s, place));
  if (theirs.length !== ours.length) return `tree-sitter reads ${ours.length} command(s) in ${clip(text)}, sh-syntax ${theirs.length}`;
  for (let i = 0; i < ours.length; i++) {
    if (theirs[i] !== ours[i]) return `they read ${clip(text)} differently (tree-sitter: ${ours[i]}; sh-syntax: ${theirs[i]})`;
  }
  return null;
}

/** All words at once, one `> WORD` line each: sh-syntax must read each as one word with the same parts. */
function compareWords(source: string, words: readonly WordShape[]): Verdict {
  if (words.length === 0) return null;
  let probe = '';
  const starts: number[] = [];
  for (const w of words) {
    starts.push(probe.length + 2);
    probe += `> ${source.slice(w.start, w.end)}\n`;
  }
  const parsed = shParseLoaded(probe);
  const stmts = parsed.ok ? fromSh(probe, parsed.stmts) : [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const offset = starts[i]! - w.start;
    const expected = wordText(source, w, (p) => p + offset);
    const s = stmts[i];
    const r = s?.redirs[0];
    const got = s && !s.cmd && s.redirs.length === 1 && r?.op === '>' && !r.fd ? wordText(probe, r.word, (p) => p) : 'not one word';
    if (got !== expected) return `tree-sitter reads ${clip(source.slice(w.start, w.end))} as one word (${wordText(source, w, (p) => p)}), sh-syntax does not (${got})`;
  }
  if (stmts.length !== words.length) return 'sh-syntax splits the words differently';
  return null;
}

function findBroken(node: Node): string | null {
  if (node.isMissing) return `a missing \`${node.type}\``;
  if (node.type === 'ERROR') return `unparsable text ${clip(node.text)}`;
  for (let i = 0; i < node.childCount; i++) {
    const found = findBroken(node.child(i)!);
    if (found) return found;
  }
  return null;
}

/**
 * Compare the two parsers' readings of `source`; `root` is tree-sitter's tree of it.
 * Returns null when they agree, else why not.
 */
export async function parserDisagreement(source: string, root: Node): Promise<Disagreement | null> {
  await loadShSyntax();
  const broken = findBroken(root);
  if (broken) return { kind: 'syntax', detail: `tree-sitter: ${broken}` };
  const whole = shParseLoaded(source);
  if (!whole.ok) return { kind: 'syntax', detail: `sh-syntax: ${whole.error}` };
  let shape;
  try {
    shape = new ShapeReader(source).read(root);
  } catch (err) {
    if (err instanceof Unsupported) return { kind: 'unsupported', detail: err.message };
    throw err;
  }
  for (const list of shape.lists) {
    const verdict = compareList(source, list);
    if (verdict) return { kind: 'disagree', detail: verdict };
  }
  const verdict = compareWords(source, shape.words);
  return verdict ? { kind: 'disagree', detail: verdict } : null;
}

/** What to tell the model about a command the two parsers do not read alike. */
export function agreementReason(problem: Disagreement): string {
  switch (problem.kind) {
    case 'syntax':
      return `the command could not be parsed as bash (${problem.detail}); fix the syntax`;
    case 'unsupported':
      return `the two bash parsers could not be compared on this command (${problem.detail}); ${SIMPLIFY} or split it into simpler commands`;
    case 'disagree':
      return `the two bash parsers disagree about this command (${problem.detail}); ${SIMPLIFY}`;
  }
}

/** Deny (throw a ShellDenial) unless tree-sitter-bash and mvdan/sh read `source` alike. */
export async function checkParserAgreement(source: string, root: Node): Promise<void> {
  const problem = await parserDisagreement(source, root);
  if (problem) deny(agreementReason(problem));
}
