/** Glob on a real temporary workspace: order, skipped directories, .gitignore, limits. */
import { utimesSync } from 'node:fs';
import path from 'node:path';
import { GLOB_LIMITS } from '../../../src/activities/tools/glob';
import { context, run, tempDir, type TempDir } from './kit';

let ws: TempDir;
beforeEach(() => {
  ws = tempDir();
});
afterEach(() => ws.remove());

/** Creates a file with a given modification time (seconds since the epoch). */
function fileAt(rel: string, mtime: number): string {
  const p = ws.file(rel, rel);
  utimesSync(p, mtime, mtime);
  return p;
}

describe('Glob', () => {
  it('lists matches newest first as absolute paths', async () => {
    const old = fileAt('src/old.ts', 1_000_000);
    const mid = fileAt('src/deep/mid.ts', 2_000_000);
    const fresh = fileAt('fresh.ts', 3_000_000);
    fileAt('src/notes.md', 4_000_000);
    const out = await run('Glob', { pattern: '**/*.ts' }, context(ws.dir));
    expect(out).toEqual({ isError: false, content: [fresh, mid, old].join('\n') });
  });

  it('searches under path only', async () => {
    fileAt('a/x.ts', 1);
    const inB = fileAt('b/y.ts', 1);
    const out = await run('Glob', { pattern: '*.ts', path: 'b' }, context(ws.dir));
    expect(out.content).toBe(inB);
  });

  it('skips .git and node_modules and honours the root .gitignore', async () => {
    ws.file('.gitignore', 'dist/\n*.log\n!keep.log\n');
    const kept = [fileAt('src/a.js', 1), fileAt('keep.log', 2), fileAt('.hidden.js', 3)];
    fileAt('.git/hooks/pre-commit.js', 4);
    fileAt('node_modules/pkg/index.js', 5);
    fileAt('sub/node_modules/pkg/index.js', 6);
    fileAt('dist/bundle.js', 7);
    fileAt('debug.log', 8);
    const out = await run('Glob', { pattern: '**/*' }, context(ws.dir));
    expect(out.content.split('\n').sort()).toEqual([...kept, path.join(ws.dir, '.gitignore')].sort());
  });

  it(`shows at most ${GLOB_LIMITS.maxResults} results and says how many more`, async () => {
    for (let i = 0; i < 250; i++) fileAt(`many/f${String(i).padStart(3, '0')}.txt`, 1000 + i);
    const out = await run('Glob', { pattern: 'many/*.txt' }, context(ws.dir));
    const lines = out.content.split('\n');
    expect(lines).toHaveLength(201);
    expect(lines[0]).toBe(path.join(ws.dir, 'many/f249.txt'));
    expect(lines[200]).toBe('[50 more files not shown (250 in total); narrow the pattern or the path.]');
  });

  it('says so when nothing matches (not an error)', async () => {
    const out = await run('Glob', { pattern: '**/*.rs' }, context(ws.dir));
    expect(out).toEqual({ isError: false, content: `No files match "**/*.rs" in ${ws.dir}.` });
  });

  it('reports a missing search path and bad arguments as errors', async () => {
    const missing = await run('Glob', { pattern: '*', path: 'nope' }, context(ws.dir));
    expect(missing.isError).toBe(true);
    expect(missing.content).toContain('Path not found: nope');
    const bad = await run('Glob', { pattern: '' }, context(ws.dir));
    expect(bad.isError).toBe(true);
    expect(bad.content).toMatch(/pattern: .*>=1 characters/);
  });

  it('throws AbortError when cancelled during the walk', async () => {
    for (let i = 0; i < 50; i++) fileAt(`d${i}/f.txt`, 1);
    const ctx = context(ws.dir);
    const pending = run('Glob', { pattern: '**/*' }, ctx);
    ctx.controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
