/**
 * Differential check against real bash: the classifier reasons about a parse tree, so
 * what matters is that bash runs what the tree says. Commands the classifier allows
 * (the corpus's everyday set plus seeded random splices of programs, quotes,
 * separators, here-documents and dangerous fragments) are run by /bin/bash with PATH
 * pointing at logging stubs in a temporary directory. Every program bash started must
 * be an allowed one, no file may appear, and a few dangerous argument forms must not
 * reach the stubs. Skipped where /bin/bash is missing.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { classifyShellCommand } from '../../../src/activities/tools/shell';
import { parseCorpus } from '../../../src/activities/tools/shell/corpus-report';

const BASH = '/bin/bash';
const PROGRAMS = 'cat head tail wc grep ls sort uniq find sed awk git env xargs timeout nice date echo printf test jq tree tee'.split(' ');
const STUBS = [...PROGRAMS, 'rm', 'touch', 'sh', 'x', 'y', 'z', 'f'];

const SAFE = ['ls', 'echo', 'cat f', 'grep a f', 'sort f', 'uniq f', 'wc -l f', 'sed -n p f', 'awk 1 f', 'find .', 'head f', 'env', 'xargs', 'timeout 1', 'nice', 'command', 'time', 'git'];
const TRICK = [' ', ' ', "'", '"', '\\', '\\\n', "$'", '#', '{', '}', '(', ')', ';', '\n', '&&', '||', '|', '&', '|&', '<<EOF\n', '\nEOF\n', "<<'EOF'\n", '`', '$(', '$x', '${x}', '>/dev/null', '2>&1', '<', '<<<', '-', '--', '=', 'a=1', '!', '[', ']', '*', '?', '~', '\t', 'EOF', 'do', 'done', 'for i in a;', 'then', 'if', 'fi', ',', '.', '\\ '];
const BAD = ['rm x', 'touch y', '>', '-o', 'z', '-delete', '-i', 'w z', 'e', '-exec', 'sh', 'y', '-fprint', 'tee z', 'x'];
const TOKENS = [...SAFE, ...SAFE, ...SAFE, ...TRICK, ...TRICK, ...BAD];

/** Small deterministic PRNG (mulberry32), so failures reproduce. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function splices(count: number, seed: number): string[] {
  const rand = prng(seed);
  const out = new Set<string>();
  while (out.size < count) {
    let cmd = '';
    const n = 2 + Math.floor(rand() * 8);
    for (let i = 0; i < n; i++) cmd += TOKENS[Math.floor(rand() * TOKENS.length)]!;
    out.add(cmd);
  }
  return [...out];
}

/** Argument forms that would write if they reached these programs. */
function dangerous(argv: readonly string[]): boolean {
  const [name, ...all] = argv;
  const end = all.indexOf('--');
  const args = end < 0 ? all : all.slice(0, end);
  const shortHas = (a: string, letters: string) => a.startsWith('-') && !a.startsWith('--') && [...letters].some((l) => a.includes(l));
  switch (name) {
    case 'sort':
      return args.some((a) => shortHas(a, 'oT') || /^--(o|c|t)/.test(a));
    case 'sed':
      return args.some((a) => shortHas(a, 'if') || /^--(i|f)/.test(a));
    case 'find':
      // -exec/-execdir may run a read-only program; anything else after them is a finding.
      return args.some((a, i) => /^-(delete|ok|okdir|fprint|fprint0|fprintf|fls)$/.test(a) || (/^-exec(dir)?$/.test(a) && !PROGRAMS.includes(args[i + 1] ?? '')));
    case 'tee':
      // Only `tee /dev/null` (a pass-through) is read-only.
      return all.some((a) => !a.startsWith('-') && a !== '/dev/null');
    case 'uniq':
      return all.filter((a) => !a.startsWith('-') || a === '-').length > 1;
    default:
      return false;
  }
}

// bash is on every machine this project targets: without it this fails rather than skips.
describe('classifier agrees with bash on what runs', () => {
  let root: string;
  let stubs: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'shell-diff-'));
    stubs = join(root, 'stubs');
    mkdirSync(stubs);
    // One line per call, written at once so concurrent pipeline stages do not interleave.
    const stub = '#!/bin/bash\nprintf -v a " %q" "$@"\nprintf "%s%s\\n" "${0##*/}" "$a" >> "$FZLOG"\n';
    for (const name of STUBS) {
      writeFileSync(join(stubs, name), stub);
      chmodSync(join(stubs, name), 0o755);
    }
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  async function runAllowed(commands: readonly string[]): Promise<{ checked: number; problems: string[] }> {
    const problems: string[] = [];
    let checked = 0;
    for (const cmd of commands) {
      if (!(await classifyShellCommand(cmd)).readOnly) continue;
      checked++;
      const cwd = mkdtempSync(join(root, 'run-'));
      writeFileSync(join(cwd, 'f'), 'a\n');
      const log = `${cwd}.log`;
      writeFileSync(log, '');
      spawnSync(BASH, ['--norc', '--noprofile', '-c', cmd], { cwd, env: { PATH: stubs, HOME: cwd, FZLOG: log }, timeout: 2000, stdio: 'ignore' });
      const calls = readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' '));
      const ran = calls.map((c) => c[0]!);
      const files = readdirSync(cwd);
      const unexpected = ran.filter((name) => !PROGRAMS.includes(name));
      // %q output keeps each argument on one space-free token, so a plain split is enough
      // for the forms checked here.
      const risky = calls.filter((c) => dangerous(c.map((a) => a.replace(/^'|'$/g, ''))));
      if (unexpected.length > 0 || files.join() !== 'f' || risky.length > 0) {
        problems.push(`${JSON.stringify(cmd)} ran ${JSON.stringify(ran)} files ${JSON.stringify(files)}`);
      }
    }
    return { checked, problems };
  }

  it('runs only allowed programs for the everyday corpus commands', async () => {
    const corpus = parseCorpus(readFileSync(resolve(__dirname, '..', '..', 'data', 'shell-corpus.jsonl'), 'utf8'));
    const { checked, problems } = await runAllowed(corpus.filter((e) => e.expect === 'allow').map((e) => e.cmd));
    expect(checked).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });

  it('runs only allowed programs for random splices the classifier allows', async () => {
    const { checked, problems } = await runAllowed(splices(2500, 20240601));
    expect(checked).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });
});
