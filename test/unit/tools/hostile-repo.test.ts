/**
 * A repository whose configuration runs programs — a clean/smudge filter, a textconv driver,
 * `diff.external`, a diff driver command, `core.fsmonitor`, `core.pager`, hooks — met by the
 * everyday read commands `git status`, `diff`, `log -p` and `show`, through the real Bash
 * tool of a read-only fork:
 * - sandbox off (the worker's explicit opt-out): such a call is refused before git runs, so
 *   no program of the repository runs on the worker;
 * - sandbox on: git may run them, but inside the sandbox, where they write nothing outside
 *   and see none of the worker's secrets; a writing fork's run them within its workspace only.
 * Each program, if it runs, tries to leave a marker next to the repository and in a folder
 * outside it, and to copy a secret that lies outside the workspace.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SandboxAvailability } from '../../../src/activities/tools/sandbox';
import { classifyShellCommand } from '../../../src/activities/tools/shell';
import type { ToolContext, WritePolicy } from '../../../src/activities/tools/types';
import { context, run } from './kit';
import { realSandbox } from '../../kit/bubblewrap';

const REPO = path.resolve(__dirname, '..', '..', '..');
const COMMANDS = ['git status', 'git status --short', 'git diff', 'git diff HEAD', 'git log -p', 'git show', 'git diff --stat', 'git log -p --follow -- a.txt'];

let available: SandboxAvailability;
let base: string;
let ws: string;
let outside: string;

beforeAll(async () => {
  available = await realSandbox();
}, 300_000);

beforeEach(() => {
  mkdirSync(path.join(REPO, '.scratch'), { recursive: true });
  base = realpathSync(mkdtempSync(path.join(REPO, '.scratch', 'hostile-')));
  chmodSync(base, 0o755);
  ws = path.join(base, 'repo');
  outside = path.join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'ffsecret-outside-the-workspace\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(ws, '.gitattributes'), '*.txt filter=evil diff=evil\n*.md diff=cmd\n');
  writeFileSync(path.join(ws, 'a.txt'), 'one\n');
  writeFileSync(path.join(ws, 'b.md'), '# b\n');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init');
  writeFileSync(path.join(ws, 'a.txt'), 'one\ntwo\n');
  writeFileSync(path.join(ws, 'b.md'), '# b\nmore\n');
  // Each program: a marker beside the repository and outside it, and a copy of the secret.
  const evil = (name: string) => `sh -c 'touch ${ws}/ran-${name} ${outside}/ran-${name}; cp ${outside}/secret.txt ${ws}/stolen-${name}; cat'`;
  for (const [key, value] of [
    ['filter.evil.clean', evil('clean')],
    ['filter.evil.smudge', evil('smudge')],
    ['diff.evil.textconv', `sh -c 'touch ${ws}/ran-textconv ${outside}/ran-textconv; cat "$0"'`],
    ['diff.cmd.command', evil('diffcmd')],
    ['diff.external', evil('external')],
    ['core.fsmonitor', evil('fsmonitor')],
    ['core.pager', evil('pager')],
    ['core.hooksPath', path.join(ws, 'hooks')],
  ]) git('config', key!, value!);
  mkdirSync(path.join(ws, 'hooks'));
  writeFileSync(path.join(ws, 'hooks', 'post-index-change'), `#!/bin/sh\ntouch ${outside}/ran-hook\n`, { mode: 0o755 });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function ctx(policy: WritePolicy, sandboxed: boolean): ToolContext {
  const availability: SandboxAvailability = sandboxed ? available : { available: false, reason: 'test: sandbox off', allowUnsandboxed: true };
  return context(ws, { writePolicy: policy, classifyShell: classifyShellCommand, shellSandbox: { availability, require: false } });
}

/** Markers and stolen copies the programs left, outside the workspace and (for forks that must not write) in it. */
function traces(): { outside: string[]; inside: string[] } {
  return { outside: readdirSync(outside).filter((n) => n !== 'secret.txt'), inside: readdirSync(ws).filter((n) => n.startsWith('ran-') || n.startsWith('stolen-')) };
}

test('sandbox off: every such git command is refused, and none of the programs runs', async () => {
  for (const command of COMMANDS) {
    const out = await run('Bash', { command }, ctx({ kind: 'none' }, false));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/git here would run programs the repository's configuration names \(.*diff\.external/);
  }
  expect(traces()).toEqual({ outside: [], inside: [] });
  // A repository without such settings is read as usual.
  execFileSync('sh', ['-c', 'for k in filter.evil.clean filter.evil.smudge diff.evil.textconv diff.cmd.command diff.external; do git config --unset $k; done'], { cwd: ws });
  const plain = await run('Bash', { command: 'git status --short' }, ctx({ kind: 'none' }, false));
  expect(plain).toMatchObject({ isError: false, containment: 'classifier-only' });
  expect(traces()).toEqual({ outside: [], inside: [] });
});

test('sandbox on, read-only fork: the programs run contained — nothing written anywhere, no secret reached', async () => {
  for (const command of COMMANDS) {
    const out = await run('Bash', { command }, ctx({ kind: 'none' }, true));
    expect(out.containment).toBe('sandbox');
    expect(out.content).not.toContain('ffsecret');
  }
  expect(traces()).toEqual({ outside: [], inside: [] });
  expect(existsSync(path.join(outside, 'ran-hook'))).toBe(false);
});

test('sandbox on, writing fork: whatever the programs do stays in its workspace', async () => {
  for (const command of COMMANDS) {
    const out = await run('Bash', { command }, ctx({ kind: 'workspace' }, true));
    expect(out.containment).toBe('sandbox');
    expect(out.content).not.toContain('ffsecret');
  }
  expect(traces().outside).toEqual([]);
  // They may have touched their markers inside; none could copy the secret from outside.
  for (const name of traces().inside.filter((n) => n.startsWith('stolen-'))) {
    expect(execFileSync('cat', [path.join(ws, name)]).toString()).toBe('');
  }
});

test("sandbox on, writing fork: the repository's config and hooks stay read-only, so no program can be planted for git outside", async () => {
  const out = await run('Bash', { command: `git config core.fsmonitor 'touch ${outside}/planted'; echo '#!/bin/sh' > .git/hooks/post-checkout; git config --get core.fsmonitor` }, ctx({ kind: 'workspace' }, true));
  expect(out.content).toMatch(/could not lock config file|Read-only file system|Permission denied/);
  expect(execFileSync('git', ['config', '--get', 'core.fsmonitor'], { cwd: ws }).toString()).not.toContain('planted');
  expect(existsSync(path.join(ws, '.git', 'hooks', 'post-checkout'))).toBe(false);
});

// Issue 42, finding 6: the walk for nested repositories stopped at 6 levels and never entered
// node_modules, so a repository planted there was read by git with its textconv obeyed.
test.each([
  ['nested 9 levels down', 'a/b/c/d/e/f/g/h/deep'],
  ['under node_modules', 'node_modules/pkg'],
])('sandbox off: a repository %s is checked too, and its textconv does not run', async (_where, rel) => {
  const top = path.join(base, 'top');
  const nested = path.join(top, rel);
  mkdirSync(nested, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: nested, env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(nested, '.gitattributes'), '*.txt diff=evil\n');
  writeFileSync(path.join(nested, 'a.txt'), 'one\n');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init');
  writeFileSync(path.join(nested, 'a.txt'), 'one\ntwo\n');
  git('config', 'diff.evil.textconv', `sh -c 'touch ${outside}/ran-nested-textconv; cat "$0"'`);
  const availability: SandboxAvailability = { available: false, reason: 'test: sandbox off', allowUnsandboxed: true };
  const out = await run('Bash', { command: `git -C ${rel} diff` }, context(top, { writePolicy: { kind: 'none' }, classifyShell: classifyShellCommand, shellSandbox: { availability, require: false } }));
  expect(existsSync(path.join(outside, 'ran-nested-textconv'))).toBe(false);
  expect(out.isError).toBe(true);
  expect(out.content).toContain(`diff.evil.textconv in ${nested}`);
});
