/** Read on a real temporary workspace: numbering, windows, limits and refusals. */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { READ_LIMITS } from '../../../src/activities/tools/read';
import { context, run, tempDir, type TempDir } from './kit';

let ws: TempDir;
beforeEach(() => {
  ws = tempDir();
});
afterEach(() => ws.remove());

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('Read', () => {
  it('shows cat -n style numbered lines for a relative path', async () => {
    ws.file('src/a.txt', 'alpha\nbeta\n');
    const out = await run('Read', { file_path: 'src/a.txt' }, context(ws.dir));
    expect(out).toEqual({ isError: false, content: '     1\talpha\n     2\tbeta' });
  });

  it('reads an absolute path and a last line without newline', async () => {
    const p = ws.file('b.txt', 'one\ntwo');
    const out = await run('Read', { file_path: p }, context(ws.dir));
    expect(out.content).toBe('     1\tone\n     2\ttwo');
  });

  it('honours offset and limit and says where to continue', async () => {
    ws.file('n.txt', numbered(50));
    const out = await run('Read', { file_path: 'n.txt', offset: 10, limit: 3 }, context(ws.dir));
    expect(out.content).toBe('    10\tline 10\n    11\tline 11\n    12\tline 12\n[More lines follow. Continue with offset: 13.]');
  });

  it('shows 2000 lines by default', async () => {
    ws.file('big.txt', numbered(2500));
    const out = await run('Read', { file_path: 'big.txt' }, context(ws.dir));
    const lines = out.content.split('\n');
    expect(lines).toHaveLength(READ_LIMITS.defaultLines + 1);
    expect(lines[1999]).toBe('  2000\tline 2000');
    expect(lines[2000]).toBe('[More lines follow. Continue with offset: 2001.]');
  });

  it('cuts long lines at 2000 characters with a marker', async () => {
    ws.file('long.txt', 'x'.repeat(5000) + '\nshort\n');
    const out = await run('Read', { file_path: 'long.txt' }, context(ws.dir));
    const [first, second] = out.content.split('\n');
    expect(first).toBe(`     1\t${'x'.repeat(2000)} [... line truncated: 5000 chars in total]`);
    expect(second).toBe('     2\tshort');
  });

  it('requires offset/limit for files over 256 KiB, and then reads them', async () => {
    ws.file('huge.txt', numbered(40_000)); // about 430 KiB
    const whole = await run('Read', { file_path: 'huge.txt' }, context(ws.dir));
    expect(whole.isError).toBe(true);
    expect(whole.content).toMatch(/more than 256 KiB.*offset and limit/);
    const part = await run('Read', { file_path: 'huge.txt', offset: 39_999, limit: 5 }, context(ws.dir));
    expect(part).toEqual({ isError: false, content: ' 39999\tline 39999\n 40000\tline 40000' });
  });

  it('refuses binary files', async () => {
    ws.file('img.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    const out = await run('Read', { file_path: 'img.bin' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('binary');
  });

  it('refuses directories and points to Glob', async () => {
    mkdirSync(path.join(ws.dir, 'sub'));
    const out = await run('Read', { file_path: 'sub' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/is a directory.*Glob/);
  });

  it('refuses a FIFO without hanging', async () => {
    execFileSync('mkfifo', [path.join(ws.dir, 'pipe')]);
    const out = await run('Read', { file_path: 'pipe' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('not a regular file');
  });

  it('suggests Glob for a missing file', async () => {
    const out = await run('Read', { file_path: 'docs/missing.md' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('File not found: docs/missing.md');
    expect(out.content).toContain('Glob (e.g. pattern "**/missing.md")');
  });

  it('reports an offset past the end, and an empty file', async () => {
    ws.file('three.txt', 'a\nb\nc\n');
    const past = await run('Read', { file_path: 'three.txt', offset: 10 }, context(ws.dir));
    expect(past).toEqual({ isError: true, content: 'three.txt has only 3 lines; offset 10 is past the end.' });
    ws.file('empty.txt', '');
    const empty = await run('Read', { file_path: 'empty.txt' }, context(ws.dir));
    expect(empty).toEqual({ isError: false, content: '(empty.txt is empty)' });
  });

  it('rejects a limit above the schema maximum', async () => {
    ws.file('a.txt', 'a\n');
    const out = await run('Read', { file_path: 'a.txt', limit: 10_000 }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/limit: .*5000/);
  });
});
