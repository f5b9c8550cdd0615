/**
 * Path escapes against the memory directory (`within` policy): every trick a model could
 * try, each asserting that the write is denied with a usable message and that nothing
 * outside the memory directory changed (a fingerprint of the whole neighbourhood).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, symlinkSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { writeContained } from '../../../src/activities/tools/contained-write';
import { pinWritePolicy } from '../../../src/activities/tools/paths';
import type { ToolOutcome } from '../../../src/activities/tools/types';
import { context, run } from './kit';
import { memoryWorld, type MemoryWorld } from './memory-kit';

let w: MemoryWorld;
let before: Record<string, string>;
beforeEach(() => {
  w = memoryWorld();
});
afterEach(() => {
  try {
    // The invariant of every test here: 0 writes outside the memory directory.
    expect(w.fingerprint()).toEqual(before);
  } finally {
    w.base.remove();
  }
});

/** Takes the fingerprint of the outside after the scenario's own setup. */
function armed(): void {
  before = w.fingerprint();
}

function expectDenied(out: ToolOutcome, pattern: RegExp): void {
  expect(out.isError).toBe(true);
  expect(out.content).toMatch(pattern);
  expect(out.touched).toBeUndefined();
}

const write = (file_path: unknown, content = 'PWNED\n'): Promise<ToolOutcome> => run('FileWrite', { file_path, content }, w.ctx());
const edit = (file_path: unknown): Promise<ToolOutcome> => run('FileEdit', { file_path, old_string: 'ORIGINAL', new_string: 'PWNED' }, w.ctx());

describe('memory directory containment', () => {
  it('allows an absolute path inside, reporting the canonical path as touched', async () => {
    armed();
    const p = path.join(w.mem, 'notes.md');
    expect(await write(p)).toEqual({ isError: false, content: `Created ${p} (6 bytes).`, touched: [p] });
    expect(await edit(p)).toMatchObject({ isError: true, content: expect.stringContaining('not found') as string });
    expect(readFileSync(p, 'utf8')).toBe('PWNED\n');
  });

  it('follows a memory directory given through a symlink, and symlinks that stay inside', async () => {
    const alias = path.join(w.base.dir, 'mem-alias');
    symlinkSync(w.mem, alias);
    mkdirSync(path.join(w.mem, 'real'));
    symlinkSync(path.join(w.mem, 'real'), path.join(w.mem, 'inner-link'));
    armed();
    const ctx = context(w.mem, { writePolicy: { kind: 'within', dir: alias } });
    const out = await run('FileWrite', { file_path: path.join(alias, 'inner-link', 'a.md'), content: 'ok' }, ctx);
    expect(out.touched).toEqual([path.join(w.mem, 'real', 'a.md')]);
  });

  it('denies a symlinked file pointing outside (write and edit)', async () => {
    symlinkSync(w.secret, path.join(w.mem, 'evil.md'));
    armed();
    expectDenied(await write(path.join(w.mem, 'evil.md')), /resolves to .*outside\/secret\.md, which is outside the memory directory/);
    expectDenied(await edit(path.join(w.mem, 'evil.md')), /outside the memory directory/);
  });

  it('denies a dangling symlink whose target would be created outside', async () => {
    symlinkSync(path.join(w.outside, 'planted.md'), path.join(w.mem, 'dangling.md'));
    armed();
    expectDenied(await write(path.join(w.mem, 'dangling.md')), /symbolic link to a missing target/);
    expect(existsSync(path.join(w.outside, 'planted.md'))).toBe(false);
  });

  it('denies paths through a symlinked directory, also to missing subdirectories', async () => {
    symlinkSync(w.outside, path.join(w.mem, 'sub'));
    armed();
    expectDenied(await write(path.join(w.mem, 'sub', 'x.md')), /outside the memory directory/);
    expectDenied(await write(path.join(w.mem, 'sub', 'secret.md')), /outside the memory directory/);
    expectDenied(await write(path.join(w.mem, 'sub', 'new', 'deep', 'x.md')), /outside the memory directory/);
  });

  it('denies .. escapes', async () => {
    mkdirSync(path.join(w.mem, 'a'));
    armed();
    expectDenied(await write(`${w.mem}/../outside/x.md`), /outside the memory directory/);
    expectDenied(await write(`${w.mem}/a/../../outside/secret.md`), /outside the memory directory/);
    expectDenied(await write(`${w.mem}/..`), /outside the memory directory/);
  });

  it('denies writing the memory directory itself', async () => {
    armed();
    expectDenied(await write(w.mem), /outside the memory directory/);
    expectDenied(await write(`${w.mem}/.`), /outside the memory directory/);
  });

  it('denies relative paths, even ones that would resolve inside', async () => {
    armed();
    expectDenied(await write('notes.md'), /notes\.md is not an absolute path/);
    expectDenied(await write('./mem/notes.md'), /not an absolute path/);
    expect(readdirSync(w.mem)).toEqual([]);
  });

  it('denies non-string paths at the tool and at the containment layer', async () => {
    armed();
    for (const bad of [42, null, true, ['/x'], undefined]) expectDenied(await write(bad), /file_path/);
    expectDenied(await write({ toString: () => path.join(w.mem, 'x') }), /must be flat/);
    for (const bad of [42, null, { path: w.mem }, Symbol('x')]) {
      const r = await writeContained({ policy: w.policy, root: w.mem, filePath: bad, create: true, readCurrent: false, decide: () => ({ kind: 'write', content: 'x' }) });
      expect(r).toMatchObject({ kind: 'denied', message: expect.stringContaining('must be a string') as string });
    }
    expectDenied(await write(`${w.mem}/a\0b`), /NUL/);
  });

  it('denies a missing parent directory without creating it', async () => {
    armed();
    expectDenied(await write(path.join(w.mem, 'nope', 'x.md')), /parent directory .*nope does not exist.*do not create directories/);
    expect(existsSync(path.join(w.mem, 'nope'))).toBe(false);
  });

  it('denies a hard link to an outside file (write and edit)', async () => {
    linkSync(w.secret, path.join(w.mem, 'alias.md'));
    armed();
    expectDenied(await write(path.join(w.mem, 'alias.md')), /2 hard links/);
    expectDenied(await edit(path.join(w.mem, 'alias.md')), /2 hard links/);
  });

  it('denies a FIFO without hanging', async () => {
    execFileSync('mkfifo', [path.join(w.mem, 'pipe.md')]);
    armed();
    expectDenied(await write(path.join(w.mem, 'pipe.md')), /not a regular file/);
  });

  it('compares case exactly: /MEM is not /mem', async () => {
    mkdirSync(path.join(w.base.dir, 'MEM'));
    armed();
    expectDenied(await write(path.join(w.base.dir, 'MEM', 'x.md')), /outside the memory directory/);
    expectDenied(await write(path.join(w.base.dir, 'Mem', 'x.md')), /Cannot write|outside/);
    expect(readdirSync(path.join(w.base.dir, 'MEM'))).toEqual([]);
  });

  it('denies sibling directories sharing the prefix', async () => {
    mkdirSync(path.join(w.base.dir, 'mem-evil'));
    mkdirSync(path.join(w.base.dir, 'memory'));
    armed();
    expectDenied(await write(path.join(w.base.dir, 'mem-evil', 'x.md')), /outside the memory directory/);
    expectDenied(await write(path.join(w.base.dir, 'memory', 'x.md')), /outside the memory directory/);
  });

  it('denies look-alike directory names (Cyrillic e, fullwidth letters)', async () => {
    const cyrillic = path.join(w.base.dir, 'm\u0435m'); // е U+0435
    const fullwidth = path.join(w.base.dir, '\uff4d\uff45\uff4d'); // ｍｅｍ
    mkdirSync(cyrillic);
    mkdirSync(fullwidth);
    armed();
    expectDenied(await write(path.join(cyrillic, 'x.md')), /outside the memory directory/);
    expectDenied(await write(path.join(fullwidth, 'x.md')), /outside the memory directory/);
  });

  it('treats look-alike slashes as part of a name inside the directory', async () => {
    armed();
    for (const slash of ['\uff0f', '\u2215', '\u2044']) {
      const name = `..${slash}..${slash}outside${slash}secret.md`;
      const out = await write(path.join(w.mem, name));
      expect(out.touched).toEqual([path.join(w.mem, name)]);
    }
    expect(readdirSync(w.mem)).toHaveLength(3);
  });
});

describe('unicode normalisation', () => {
  const nfc = 'm\u00e9moire';
  const nfd = 'me\u0301moire';

  it.each([
    ['NFC', nfc, nfd],
    ['NFD', nfd, nfc],
  ])('a %s memory directory is not its other normal form', async (_label, memName, otherName) => {
    w.base.remove();
    w = memoryWorld(memName);
    mkdirSync(path.join(w.base.dir, otherName));
    armed();
    expectDenied(await write(path.join(w.base.dir, otherName, 'x.md')), /outside the memory directory/);
    const ok = await write(path.join(w.base.dir, memName, 'x.md'));
    expect(ok.touched).toEqual([path.join(w.mem, 'x.md')]);
  });

  it('writes a decomposed file name as given, without normalising it onto another file', async () => {
    const composed = path.join(w.mem, 'caf\u00e9.md');
    const decomposed = path.join(w.mem, 'cafe\u0301.md');
    await write(composed, 'composed');
    armed();
    const out = await write(decomposed, 'decomposed');
    expect(out.touched).toEqual([decomposed]);
    expect(readFileSync(composed, 'utf8')).toBe('composed');
    expect(readFileSync(decomposed, 'utf8')).toBe('decomposed');
  });
});

describe('pinned and moved memory directories', () => {
  it('refuses writes when the memory directory now resolves elsewhere than when pinned', async () => {
    const alias = path.join(w.base.dir, 'mem-alias');
    symlinkSync(w.mem, alias);
    const pinned = await pinWritePolicy({ kind: 'within', dir: alias });
    expect(pinned).toEqual({ kind: 'within', dir: alias, canonicalDir: w.mem });
    unlinkSync(alias);
    symlinkSync(w.outside, alias); // the memory directory is swapped for the outside
    armed();
    const out = await run('FileWrite', { file_path: path.join(alias, 'x.md'), content: 'PWNED' }, context(w.mem, { writePolicy: pinned }));
    expectDenied(out, /now resolves to .*outside, not .*mem as when this agent started/);
  });

  it('refuses writes when the memory directory is gone', async () => {
    const ctx = context(w.mem, { writePolicy: { kind: 'within', dir: path.join(w.base.dir, 'vanished') } });
    armed();
    expectDenied(await run('FileWrite', { file_path: path.join(w.base.dir, 'vanished', 'x.md'), content: 'x' }, ctx), /cannot be resolved/);
  });
});

describe('without /proc (portable mode)', () => {
  const req = (filePath: string, policy = w.policy, root = w.mem) =>
    writeContained({ policy, root, filePath, create: true, readCurrent: false, decide: () => ({ kind: 'write', content: 'x' }) }, { useProcFd: false });

  it('refuses memory writes rather than half-protecting them', async () => {
    armed();
    expect(await req(path.join(w.mem, 'x.md'))).toMatchObject({ kind: 'denied', message: expect.stringContaining('/proc/self/fd') as string });
  });

  it('still writes inside a workspace and refuses outside', async () => {
    const ws = path.join(w.mem, 'ws');
    mkdirSync(ws);
    symlinkSync(w.outside, path.join(ws, 'out'));
    armed();
    expect(await req(path.join(ws, 'a', 'b.md'), { kind: 'workspace' }, ws)).toMatchObject({ kind: 'written', path: path.join(ws, 'a', 'b.md') });
    expect(await req(path.join(ws, 'out', 'x.md'), { kind: 'workspace' }, ws)).toMatchObject({ kind: 'denied' });
  });
});

describe('a workspace with a user memory (memory: user, S1-38): the workspace, and the memory by its own rules', () => {
  it('writes the workspace as ever and the memory by absolute path; a write that leaves both, or makes a directory in the memory, is denied', async () => {
    const workspace = path.join(w.base.dir, 'workspace');
    mkdirSync(workspace);
    const ctx = context(workspace, { writePolicy: { kind: 'workspace', memory: { dir: w.mem, canonicalDir: w.mem } } });
    // The workspace first (the fingerprint after it holds what was written there).
    expect(await run('FileWrite', { file_path: 'src/new.ts', content: 'x' }, ctx)).toMatchObject({ isError: false, touched: [path.join(workspace, 'src/new.ts')] });
    armed();
    const inMemory = path.join(w.mem, 'MEMORY.md');
    expect(await run('FileWrite', { file_path: inMemory, content: '- notes\n' }, ctx)).toMatchObject({ isError: false, touched: [inMemory] });
    expect(await run('FileEdit', { file_path: inMemory, old_string: 'notes', new_string: 'kept notes' }, ctx)).toMatchObject({ isError: false });
    expect(readFileSync(inMemory, 'utf8')).toBe('- kept notes\n');
    expectDenied(await run('FileWrite', { file_path: w.secret, content: 'PWNED' }, ctx), /outside the workspace root/);
    expectDenied(await run('FileWrite', { file_path: path.join(w.mem, 'topics', 'a.md'), content: 'x' }, ctx), /memory writes do not create directories/);
    // A link in the memory that leads out is judged where it leads.
    symlinkSync(w.secret, path.join(w.mem, 'evil.md'));
    expectDenied(await run('FileWrite', { file_path: path.join(w.mem, 'evil.md'), content: 'PWNED' }, ctx), /outside the memory directory/);
    expect(readFileSync(w.secret, 'utf8')).toBe('ORIGINAL secret\n');
  });
});
