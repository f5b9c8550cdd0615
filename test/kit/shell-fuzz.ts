/**
 * Differential fuzzing of the two bash parsers (tree-sitter-bash and mvdan/sh): a seeded,
 * grammar-directed generator of bash-like command lines (every quote kind, ANSI-C escapes
 * of every kind, expansions, substitutions, redirects incl. `{fd}>` and here-documents,
 * lists, pipelines, subshells, groups, loops, comments, line continuations, control
 * characters, keywords in odd places) plus seeded mutations of corpus lines, and a runner
 * that counts how the agreement check and the classifier treat them. Shared by
 * test/unit/shell/parser-agreement.test.ts and `npm run fuzz:shell`.
 */
import { classifyShellCommand } from '../../src/activities/tools/shell';
import { parserDisagreement } from '../../src/activities/tools/shell/agreement';
import { parseBash } from '../../src/activities/tools/shell/parser';

/** Small deterministic PRNG (mulberry32), so every failure reproduces from its seed. */
export function prng(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PROGRAMS = ['ls', 'cat', 'grep', 'echo', 'wc', 'head', 'sort', 'git', 'find', 'sed', 'awk', 'printf', 'test', 'rm', 'touch', 'x'];
const LITERALS = ['a', 'f', 'b.txt', '-l', '-n', '--', '-', 'x=1', '*.ts', '?', '[ab]', '{a,b}', '~', 'a\\ b', '\\;', '\\\'', '\\"', 'a#b', '%', ':', '=', '1', '0', 'EOF', 'p', '@'];
const ODD = ['if', 'then', 'fi', 'do', 'done', 'for', 'in', 'while', '{', '}', '!', 'case', 'esac', '[[', ']]', '((', '))', 'time', 'function', 'select', 'coproc', '[', ']'];
const ANSI_ESCAPES = ['\\a', '\\b', '\\e', '\\E', '\\f', '\\n', '\\r', '\\t', '\\v', '\\\\', "\\'", '\\"', '\\?', '\\0', '\\012', '\\101', '\\7', '\\x41', '\\x4', '\\xZ', '\\u263a', '\\u41', '\\U0001F600', '\\U41', '\\cA', '\\c?', '\\c\\\\', '\\q', '\\', "'"];
const CONTROL = ['\t', '\r', '\x01', '\x7f', '\x1b', '\v', '\f'];

export class CommandGenerator {
  private readonly rand: () => number;
  constructor(seed: number, private readonly corpus: readonly string[] = []) {
    this.rand = prng(seed);
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)]!;
  }

  private chance(p: number): boolean {
    return this.rand() < p;
  }

  /** One command line: mostly generated from the grammar, some mutated corpus lines. */
  next(): string {
    if (this.corpus.length > 0 && this.chance(0.25)) return this.mutate(this.pick(this.corpus));
    return this.list(0);
  }

  private list(depth: number): string {
    let out = this.pipeline(depth);
    while (this.chance(depth > 1 ? 0.1 : 0.35)) out += this.pick([' ; ', '; ', ' && ', ' || ', '\n', ' & ', ';', '&&']) + this.pipeline(depth);
    if (this.chance(0.05)) out += this.pick([' &', ';', ' # note', ' #', '\n']);
    return out;
  }

  private pipeline(depth: number): string {
    let out = (this.chance(0.05) ? '! ' : '') + this.command(depth);
    while (this.chance(0.25)) out += this.pick([' | ', '|', ' |& ', ' |\n']) + this.command(depth);
    return out;
  }

  private command(depth: number): string {
    const r = this.rand();
    if (depth < 2 && r < 0.05) return `(${this.list(depth + 1)})`;
    if (depth < 2 && r < 0.09) return `{ ${this.list(depth + 1)}; }`;
    if (depth < 2 && r < 0.11) return `if ${this.list(depth + 1)}; then ${this.list(depth + 1)}; fi`;
    if (depth < 2 && r < 0.13) return `for i in ${this.word(depth)} ${this.word(depth)}; do ${this.list(depth + 1)}; done`;
    if (depth < 2 && r < 0.14) return `while ${this.list(depth + 1)}; do ${this.list(depth + 1)}; done`;
    return this.simple(depth);
  }

  private simple(depth: number): string {
    const parts: string[] = [];
    if (this.chance(0.08)) parts.push(`${this.pick(['a', 'x', 'IFS', 'PATH'])}=${this.chance(0.5) ? this.word(depth) : ''}`);
    parts.push(this.chance(0.9) ? this.pick(PROGRAMS) : this.word(depth));
    const n = Math.floor(this.rand() * 4);
    for (let i = 0; i < n; i++) parts.push(this.chance(0.04) ? this.pick(ODD) : this.word(depth));
    if (this.chance(0.25)) parts.push(this.redirect(depth));
    let out = '';
    for (const part of parts) {
      if (out) out += this.chance(0.06) ? this.pick([' \\\n', '\\\n', '  ', '\t']) : ' ';
      out += part;
    }
    if (this.chance(0.03)) out += `<<${this.pick(['EOF', "'EOF'", '"EOF"', '-EOF'])}\n${this.word(depth)} line\nEOF\n`;
    return out;
  }

  private redirect(depth: number): string {
    const r = this.rand();
    if (r < 0.1) return `{fd}>${this.word(depth)}`;
    if (r < 0.2) return `<<< ${this.word(depth)}`;
    if (r < 0.3) return this.pick(['2>&1', '>&2', '>&-', '2>/dev/null', '&>/dev/null', '&>>f']);
    return `${this.pick(['', '', '1', '2', '3'])}${this.pick(['>', '>>', '<', '<>', '>|', '<&', '>&'])}${this.chance(0.5) ? ' ' : ''}${this.word(depth)}`;
  }

  word(depth: number): string {
    let out = '';
    const n = 1 + Math.floor(this.rand() * (this.chance(0.3) ? 3 : 1));
    for (let i = 0; i < n; i++) out += this.part(depth);
    return out;
  }

  private part(depth: number): string {
    const r = this.rand();
    if (r < 0.3) return this.pick(LITERALS);
    if (r < 0.4) return `'${this.text(false)}'`;
    if (r < 0.52) return `$'${this.ansi()}'`;
    if (r < 0.62) return `"${this.dq(depth)}"`;
    if (r < 0.64) return `$"${this.text(false)}"`;
    if (r < 0.7) return this.pick(['$x', '${x}', '${x:-y}', '${x:=y}', '${#x}', '${x/a/b}', '$1', '$@', '$?', '$$', '${x@P}', '$']);
    if (depth < 2 && r < 0.76) return `$(${this.list(depth + 1)})`;
    if (depth < 2 && r < 0.79) return `\`${this.simple(depth + 1)}\``;
    if (depth < 2 && r < 0.82) return `${this.pick(['<', '>'])}(${this.list(depth + 1)})`;
    if (r < 0.86) return `$((${this.pick(['1+2', 'x+1', 'x++', 'a[$(ls)]', '2*3', ' 1 '])}))`;
    if (r < 0.88) return this.pick(CONTROL);
    if (r < 0.9) return this.pick(['\\\n', '#', '\\', '\n']);
    return this.text(true);
  }

  private ansi(): string {
    let out = '';
    const n = Math.floor(this.rand() * 5);
    for (let i = 0; i < n; i++) out += this.chance(0.6) ? this.pick(ANSI_ESCAPES) : this.pick(['a', ' ', ';', 'touch p', '$x', '"', '`', '#']);
    return out;
  }

  private dq(depth: number): string {
    let out = '';
    const n = Math.floor(this.rand() * 4);
    for (let i = 0; i < n; i++) {
      const r = this.rand();
      if (r < 0.4) out += this.text(false);
      else if (r < 0.55) out += this.pick(['\\"', '\\\\', '\\$', '\\`', '\\a', "'", '\\\n']);
      else if (r < 0.75) out += this.pick(['$x', '${x}', '${x:-"y"}', '$1']);
      else if (depth < 2 && r < 0.9) out += `$(${this.list(depth + 1)})`;
      else out += `\`${this.pick(PROGRAMS)}\``;
    }
    return out;
  }

  private text(bare: boolean): string {
    const chars = bare ? 'abcxyz019._-/:,+%@' : 'abc xyz;|&<>(){}#*?~=\\\n\t';
    let out = '';
    const n = 1 + Math.floor(this.rand() * 5);
    for (let i = 0; i < n; i++) out += chars[Math.floor(this.rand() * chars.length)]!;
    return out;
  }

  /** A corpus line with a few seeded edits: insertions of tricky tokens, deletions, swaps. */
  private mutate(line: string): string {
    let out = line;
    const edits = 1 + Math.floor(this.rand() * 3);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(this.rand() * (out.length + 1));
      const r = this.rand();
      if (r < 0.5) out = out.slice(0, at) + this.pick(["'", '"', '\\', "$'", '`', ';', '\n', '\\\n', ' ', '#', '$(', ')', '{', '}', '&', '|', '<', '>', ...ANSI_ESCAPES]) + out.slice(at);
      else if (r < 0.75) out = out.slice(0, at) + out.slice(at + 1 + Math.floor(this.rand() * 3));
      else out = out.slice(0, at) + this.part(1) + out.slice(at);
    }
    return out;
  }
}

export interface FuzzFigures {
  generated: number;
  /** Neither parser reported a syntax error. */
  parsedByBoth: number;
  agreed: number;
  /** Both parsed it, and their shapes differ. */
  disagreed: number;
  /** Both parsed it, but it uses a construct the shape does not model (refused). */
  unsupported: number;
  /** Commands the check refused (any reason) that classifyShellCommand denied. */
  refusedAndDenied: number;
  /** Commands the check refused that classifyShellCommand allowed: must stay empty. */
  refusedButAllowed: string[];
  disagreements: Array<{ command: string; detail: string }>;
  /** Agreeing commands the classifier allowed (for the bash check). */
  allowed: string[];
  ms: number;
}

/** Generate `count` commands from `seed` and run each through both parsers and the classifier. */
export async function runAgreementFuzz(count: number, seed: number, corpus: readonly string[] = []): Promise<FuzzFigures> {
  const started = performance.now();
  const gen = new CommandGenerator(seed, corpus);
  const figures: FuzzFigures = { generated: 0, parsedByBoth: 0, agreed: 0, disagreed: 0, unsupported: 0, refusedAndDenied: 0, refusedButAllowed: [], disagreements: [], allowed: [], ms: 0 };
  for (let i = 0; i < count; i++) {
    const command = gen.next();
    figures.generated++;
    const tree = await parseBash(command);
    let problem;
    try {
      problem = await parserDisagreement(command, tree.rootNode);
    } finally {
      tree.delete();
    }
    if (problem?.kind !== 'syntax') figures.parsedByBoth++;
    if (problem?.kind === 'disagree') {
      figures.disagreed++;
      figures.disagreements.push({ command, detail: problem.detail });
    }
    if (problem?.kind === 'unsupported') figures.unsupported++;
    const verdict = await classifyShellCommand(command);
    if (!problem) {
      figures.agreed++;
      if (verdict.readOnly) figures.allowed.push(command);
    } else if (verdict.readOnly) figures.refusedButAllowed.push(command);
    else figures.refusedAndDenied++;
  }
  figures.ms = performance.now() - started;
  return figures;
}
