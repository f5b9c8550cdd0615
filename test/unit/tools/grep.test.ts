/** Grep on a real temporary workspace: modes, options, skips, limits and bad patterns. */
import path from 'node:path';
import { runGrep, GREP_LIMITS } from '../../../src/activities/tools/grep';
import { LineMatcher } from '../../../src/activities/tools/line-matcher';
import { context, run, tempDir, type TempDir } from './kit';

let ws: TempDir;
let a: string;
let b: string;
beforeEach(() => {
  ws = tempDir();
  a = ws.file('src/a.ts', 'const x = 1;\n// TODO: first\nconst y = 2;\nconst z = 3;\n// todo: second\n');
  b = ws.file('src/b.js', 'function f() {}\n// TODO: third\r\n');
});
afterEach(() => ws.remove());

describe('Grep', () => {
  it('lists matching files by default', async () => {
    const out = await run('Grep', { pattern: 'TODO' }, context(ws.dir));
    expect(out).toEqual({ isError: false, content: `${a}\n${b}` });
  });

  it('shows matching lines with numbers, and context with separators', async () => {
    const plain = await run('Grep', { pattern: 'TODO', output_mode: 'content' }, context(ws.dir));
    expect(plain.content).toBe(`${a}:2:// TODO: first\n${b}:2:// TODO: third`);
    const adjacent = await run('Grep', { pattern: 'first|second', output_mode: 'content', context: 1, path: 'src/a.ts' }, context(ws.dir));
    expect(adjacent.content).toBe([`${a}-1-const x = 1;`, `${a}:2:// TODO: first`, `${a}-3-const y = 2;`, `${a}-4-const z = 3;`, `${a}:5:// todo: second`].join('\n'));
    const ten = ws.file('ten.txt', Array.from({ length: 10 }, (_, i) => (i === 1 || i === 7 ? `hit ${i + 1}` : `l${i + 1}`)).join('\n') + '\n');
    const apart = await run('Grep', { pattern: '^hit', output_mode: 'content', context: 1, path: 'ten.txt' }, context(ws.dir));
    expect(apart.content).toBe([`${ten}-1-l1`, `${ten}:2:hit 2`, `${ten}-3-l3`, '--', `${ten}-7-l7`, `${ten}:8:hit 8`, `${ten}-9-l9`].join('\n'));
  });

  it('counts per file, case-insensitively when asked', async () => {
    const sensitive = await run('Grep', { pattern: 'todo', output_mode: 'count' }, context(ws.dir));
    expect(sensitive.content).toBe(`${a}:1`);
    const insensitive = await run('Grep', { pattern: 'todo', output_mode: 'count', case_insensitive: true }, context(ws.dir));
    expect(insensitive.content).toBe(`${a}:2\n${b}:1`);
  });

  it('filters by glob (basename patterns match at any depth, ! excludes)', async () => {
    expect((await run('Grep', { pattern: 'TODO', glob: '*.js' }, context(ws.dir))).content).toBe(b);
    expect((await run('Grep', { pattern: 'TODO', glob: '!*.js' }, context(ws.dir))).content).toBe(a);
    expect((await run('Grep', { pattern: 'TODO', glob: 'src/*.{ts,tsx}' }, context(ws.dir))).content).toBe(a);
  });

  it('applies head_limit with a visible note', async () => {
    ws.file('many.txt', Array.from({ length: 30 }, (_, i) => `hit ${i}`).join('\n'));
    const out = await run('Grep', { pattern: '^hit', output_mode: 'content', head_limit: 5 }, context(ws.dir));
    const lines = out.content.split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[4]).toBe(`${path.join(ws.dir, 'many.txt')}:5:hit 4`);
    expect(lines[5]).toBe('[25 more lines not shown; raise head_limit or narrow the search.]');
  });

  it('skips binaries, files over 1 MiB, ignored files, .git and node_modules', async () => {
    ws.file('.gitignore', 'build/\n');
    ws.file('bin.dat', Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1, 2])]));
    ws.file('large.txt', 'needle\n' + 'x'.repeat(GREP_LIMITS.maxFileBytes));
    ws.file('build/out.js', 'needle');
    ws.file('.git/config', 'needle');
    ws.file('node_modules/m/index.js', 'needle');
    const found = ws.file('docs/ok.md', 'a needle here');
    const out = await run('Grep', { pattern: 'needle' }, context(ws.dir));
    expect(out.content).toBe(`${found}\n[1 file over 1 MiB not searched; use Read with offset/limit on them.]`);
  });

  it('reports an invalid regular expression clearly', async () => {
    const out = await run('Grep', { pattern: 'foo(bar' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^Invalid regular expression "foo\(bar": .*Unterminated group/);
  });

  it('accepts ripgrep-style escapes that only non-unicode mode allows', async () => {
    ws.file('dash.txt', 'a-b\n');
    const out = await run('Grep', { pattern: 'a\\-b', output_mode: 'count' }, context(ws.dir));
    expect(out.content).toBe(`${path.join(ws.dir, 'dash.txt')}:1`);
  });

  it('says so when nothing matches', async () => {
    const out = await run('Grep', { pattern: 'nowhere' }, context(ws.dir));
    expect(out).toEqual({ isError: false, content: 'No matches for "nowhere".' });
  });

  it('stops a catastrophically backtracking pattern with an error instead of hanging', async () => {
    ws.file('evil.txt', 'a'.repeat(40) + '!\n');
    const started = Date.now();
    const out = await runGrep({ pattern: '^(a+)+$', path: 'evil.txt' }, context(ws.dir), { ...GREP_LIMITS, regexBudgetMs: 300 });
    expect(out.isError).toBe(true);
    expect(out.content).toContain('took more than 300 ms');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a running match is abandoned on abort and its worker terminated', async () => {
    const matcher = new LineMatcher({ source: '^(a+)+$', flags: '' });
    const controller = new AbortController();
    const started = Date.now();
    // match() posts the text before its first await, so the worker is busy when we abort.
    const pending = matcher.match('a'.repeat(40) + '!', 60_000, controller.signal);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await matcher.close(); // terminate() must stop a worker stuck in the regex
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('throws AbortError from Grep when cancelled', async () => {
    const ctx = context(ws.dir);
    const pending = run('Grep', { pattern: 'TODO' }, ctx);
    ctx.controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
