/**
 * The scratch world the shell tests run commands in, as test/data/README.md describes it: a
 * git workspace `ws/` with history, branches, signed refs and stale index data (remote
 * `origin` at http://127.0.0.1:47123/r.git), a sibling `canary/`, a `home/` and a `tmp/`;
 * and a fingerprint of a tree, to tell whether a command changed it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The loopback port of the world's git remote (an effect test listens there). */
export const EFFECT_PORT = 47123;

/** Every entry under `dir` (relative path → kind, mode, content hash); `skipTop` leaves top-level names out. */
export function fingerprint(dir: string, out: Map<string, string>, skipTop?: (name: string) => boolean, rel = ''): void {
  let names: string[];
  try {
    names = readdirSync(path.join(dir, rel));
  } catch {
    out.set(rel || '.', 'missing');
    return;
  }
  for (const name of names.sort()) {
    if (rel === '' && skipTop?.(name)) continue;
    const r = path.join(rel, name);
    const full = path.join(dir, r);
    const st = lstatSync(full);
    if (st.isDirectory()) {
      out.set(r, `dir ${st.mode}`);
      fingerprint(dir, out, skipTop, r);
    } else if (st.isSymbolicLink()) out.set(r, `link ${readlinkSync(full)}`);
    else if (st.isFile()) out.set(r, `file ${st.mode} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
    else out.set(r, `other ${st.mode}`);
  }
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
}

const ID = ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid'];
const FILES: Record<string, string> = {
  'README.md': '# demo\n',
  'package.json': '{"name":"demo","version":"1.0.0","scripts":{"test":"echo ok"}}\n',
  'tsconfig.json': '{"compilerOptions":{"strict":true}}\n',
  'src/index.ts': 'export const x = 1;\n',
  'src/x.ts': 'export function f() { return 2; }\n',
  'src/util/parse.ts': 'export const parse = (s: string) => s.trim();\n',
  'test/index.test.ts': 'import { x } from "../src";\n',
  'docs/DESIGN.md': '# design\n',
  'scripts/build.sh': '#!/bin/sh\necho build\n',
  'CHANGELOG.md': '## 1.0.0\n',
  'a.txt': 'alpha\nbeta\n',
  'b.txt': 'beta\ngamma\n',
  'data.csv': 'id,name\n1,a\n2,b\n',
  'data.json': '{"items":[{"id":1},{"id":2}]}\n',
  '.gitignore': 'node_modules/\n',
};
const FAKE_SIGNATURE = ['-----BEGIN PGP SIGNATURE-----', '', 'iQEzBAABCAAdFiEEAAAAAAAAAAAAAAAAAAAAAAAAAAAFAmAAAAA=', '=AAAA', '-----END PGP SIGNATURE-----'];

function gitOut(cwd: string, input: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, input, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } }).trim();
}

/**
 * The scratch world, as the corpus README describes it: a repository with history,
 * branches and tags (one commit and one tag carrying a signature block, so options that
 * verify signatures really run gpg), an uncommitted change, and stale index stat data.
 */
export function buildWorld(scratch: string): void {
  for (const d of ['ws', 'canary', 'home']) rmSync(path.join(scratch, d), { recursive: true, force: true });
  const ws = path.join(scratch, 'ws');
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), text);
  }
  git(ws, 'init', '-q', '-b', 'main');
  git(ws, ...ID, 'add', '.');
  git(ws, ...ID, 'commit', '-q', '-m', 'init');
  git(ws, ...ID, 'tag', '-a', 'v1.0.0', '-m', 'one');
  writeFileSync(path.join(ws, 'src', 'x.ts'), 'export function f() { return 3; }\n');
  git(ws, ...ID, 'commit', '-q', '-am', 'change f');
  git(ws, 'branch', 'feature');
  writeFileSync(path.join(ws, 'CHANGELOG.md'), '## 1.1.0\n## 1.0.0\n');
  git(ws, ...ID, 'commit', '-q', '-am', 'release');
  git(ws, 'tag', 'v1.1.0');
  git(ws, 'remote', 'add', 'origin', `http://127.0.0.1:${EFFECT_PORT}/r.git`);
  git(ws, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
  const head = gitOut(ws, '', 'rev-parse', 'HEAD');
  const tree = gitOut(ws, '', 'rev-parse', 'HEAD^{tree}');
  const who = 't <t@example.invalid> 1700000000 +0000';
  const signed = [`tree ${tree}`, `parent ${head}`, `author ${who}`, `committer ${who}`, `gpgsig ${FAKE_SIGNATURE.join('\n ')}`, '', 'signed', ''].join('\n');
  git(ws, 'update-ref', 'refs/heads/signed', gitOut(ws, signed, 'hash-object', '-t', 'commit', '-w', '--stdin'));
  const tag = [`object ${head}`, 'type commit', 'tag v2.0.0-signed', `tagger ${who}`, '', 'signed tag', ...FAKE_SIGNATURE, ''].join('\n');
  git(ws, 'update-ref', 'refs/tags/v2.0.0-signed', gitOut(ws, tag, 'hash-object', '-t', 'tag', '-w', '--stdin'));
  writeFileSync(path.join(ws, 'README.md'), '# demo\n\nwork in progress\n');
  // Stale index stat data (same content, newer mtime): any command that refreshes and
  // writes the index now visibly changes .git/index.
  const later = new Date(Date.now() + 60_000);
  for (const rel of Object.keys(FILES)) if (rel !== 'README.md') utimesSync(path.join(ws, rel), later, later);
  mkdirSync(path.join(scratch, 'canary'));
  writeFileSync(path.join(scratch, 'canary', 'keep.txt'), 'canary\n');
  mkdirSync(path.join(scratch, 'home'));
  writeFileSync(path.join(scratch, 'home', '.profile'), '# home\n');
  mkdirSync(path.join(scratch, 'tmp'), { recursive: true });
}

