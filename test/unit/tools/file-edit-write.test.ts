/** FileEdit and FileWrite on a real temporary workspace (workspace write policy). */
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { context, run, tempDir, type TempDir } from './kit';

let ws: TempDir;
let outside: TempDir;
beforeEach(() => {
  ws = tempDir();
  outside = tempDir('forkflow-outside-');
});
afterEach(() => {
  ws.remove();
  outside.remove();
});

const read = (p: string): string => readFileSync(p, 'utf8');

describe('FileWrite', () => {
  it('creates a file (and missing parents inside the root) and reports it as touched', async () => {
    const out = await run('FileWrite', { file_path: 'docs/new/notes.md', content: 'hello\n' }, context(ws.dir));
    const p = path.join(ws.dir, 'docs/new/notes.md');
    expect(out).toEqual({ isError: false, content: `Created ${p} (6 bytes).`, touched: [p] });
    expect(read(p)).toBe('hello\n');
  });

  it('overwrites the whole content, truncating a longer file', async () => {
    const p = ws.file('a.txt', 'a much longer original content');
    const out = await run('FileWrite', { file_path: p, content: 'short' }, context(ws.dir));
    expect(out.content).toBe(`Overwrote ${p} (5 bytes).`);
    expect(read(p)).toBe('short');
  });

  it('refuses paths outside the root, including via .. and symlinked directories', async () => {
    symlinkSync(outside.dir, path.join(ws.dir, 'link'));
    for (const file_path of ['../escape.txt', path.join(outside.dir, 'x.txt'), 'link/x.txt', 'link/deeper/x.txt']) {
      const out = await run('FileWrite', { file_path, content: 'x' }, context(ws.dir));
      expect(out.isError).toBe(true);
      expect(out.content).toContain('outside the workspace root');
    }
    expect(existsSync(path.join(outside.dir, 'x.txt'))).toBe(false);
    expect(existsSync(path.join(outside.dir, 'deeper'))).toBe(false); // no directory created outside
  });

  it('refuses to write a directory, and writes nothing under the none policy', async () => {
    mkdirSync(path.join(ws.dir, 'dir'));
    const dir = await run('FileWrite', { file_path: 'dir', content: 'x' }, context(ws.dir));
    expect(dir.isError).toBe(true);
    expect(dir.content).toContain('is a directory');
    const none = await run('FileWrite', { file_path: 'a.txt', content: 'x' }, context(ws.dir, { writePolicy: { kind: 'none' } }));
    expect(none.isError).toBe(true);
    expect(none.content).toContain('may not write files');
    expect(existsSync(path.join(ws.dir, 'a.txt'))).toBe(false);
  });

  it('reports bad arguments', async () => {
    const out = await run('FileWrite', { file_path: 'a.txt' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/- content: .*expected string/i);
  });
});

describe('FileEdit', () => {
  let p: string;
  beforeEach(() => {
    p = ws.file('src/code.ts', 'const a = 1;\nconst b = 1;\nconst c = 2;\n');
  });

  it('replaces a unique exact match', async () => {
    const out = await run('FileEdit', { file_path: 'src/code.ts', old_string: 'const c = 2;', new_string: 'const c = 3;' }, context(ws.dir));
    expect(out).toEqual({ isError: false, content: `Edited ${p}: replaced 1 occurrence.`, touched: [p] });
    expect(read(p)).toBe('const a = 1;\nconst b = 1;\nconst c = 3;\n');
  });

  it('refuses an ambiguous match, saying how many and what to do', async () => {
    const out = await run('FileEdit', { file_path: p, old_string: ' = 1;', new_string: ' = 9;' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toBe(`old_string occurs 2 times in ${p}. Include more surrounding lines so it matches exactly once, or set replace_all: true to replace all 2.`);
    expect(read(p)).toBe('const a = 1;\nconst b = 1;\nconst c = 2;\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    const out = await run('FileEdit', { file_path: p, old_string: ' = 1;', new_string: ' = 9;', replace_all: true }, context(ws.dir));
    expect(out.content).toBe(`Edited ${p}: replaced 2 occurrences.`);
    expect(read(p)).toBe('const a = 9;\nconst b = 9;\nconst c = 2;\n');
  });

  it('keeps $ patterns in new_string literal', async () => {
    await run('FileEdit', { file_path: p, old_string: 'const c = 2;', new_string: "const c = '$&$1$$';" }, context(ws.dir));
    expect(read(p)).toContain("const c = '$&$1$$';");
  });

  it('reports no match, identical strings, an empty old_string and a missing file', async () => {
    const none = await run('FileEdit', { file_path: p, old_string: 'const d', new_string: 'x' }, context(ws.dir));
    expect(none.content).toMatch(/^old_string was not found in .*Read the file again/);
    const same = await run('FileEdit', { file_path: p, old_string: 'a', new_string: 'a' }, context(ws.dir));
    expect(same.content).toContain('identical');
    const empty = await run('FileEdit', { file_path: p, old_string: '', new_string: 'x' }, context(ws.dir));
    expect(empty.content).toContain('old_string is empty');
    const missing = await run('FileEdit', { file_path: 'src/nope.ts', old_string: 'a', new_string: 'b' }, context(ws.dir));
    expect(missing.content).toMatch(/^File not found: src\/nope.ts\. Use Glob/);
    for (const out of [none, same, empty, missing]) expect(out.isError).toBe(true);
    expect(existsSync(path.join(ws.dir, 'src/nope.ts'))).toBe(false);
    expect(read(p)).toBe('const a = 1;\nconst b = 1;\nconst c = 2;\n');
  });

  it('reports bad arguments', async () => {
    const out = await run('FileEdit', { file_path: p, old_string: 'a', new_string: 'b', replace_all: 'yes' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/- replace_all: .*expected boolean/i);
  });
});
