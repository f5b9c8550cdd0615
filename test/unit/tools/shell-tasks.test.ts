/**
 * Background shell tasks on the host side (src/activities/shell-tasks/), with the real
 * bubblewrap sandbox: a task runs under the same walls as a foreground call, on its own (its
 * files are all a later watch needs, as after a worker restart), and ends by its exit code, a
 * stop, its time limit or a stall report. Scratch folders are under the repository's
 * .scratch/ (the sandbox replaces /tmp).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SandboxAvailability } from '../../../src/activities/tools/sandbox';
import type { ToolContext, WritePolicy } from '../../../src/activities/tools/types';
import { BadShellTaskIdError, readMeta, taskFiles } from '../../../src/activities/shell-tasks/files';
import { spawnTask } from '../../../src/activities/shell-tasks/spawn';
import { stopTask, watchTask } from '../../../src/activities/shell-tasks/watch';
import { groupAlive } from '../../../src/activities/tools/process-group';
import { classifyShellCommand } from '../../../src/activities/tools/shell';
import { realSandbox } from '../../kit/bubblewrap';
import { context } from './kit';

const REPO = path.resolve(__dirname, '..', '..', '..');
let available: SandboxAvailability;
let base: string;
let ws: string;
let state: string;
let n = 0;

beforeAll(async () => {
  available = await realSandbox();
}, 300_000);

beforeEach(() => {
  mkdirSync(path.join(REPO, '.scratch'), { recursive: true });
  base = realpathSync(mkdtempSync(path.join(REPO, '.scratch', 'shell-tasks-')));
  ws = path.join(base, 'ws');
  state = path.join(base, 'state');
  mkdirSync(ws);
  writeFileSync(path.join(ws, 'README.md'), 'original\n');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function ctx(policy: WritePolicy = { kind: 'workspace' }): ToolContext {
  return context(ws, { writePolicy: policy, classifyShell: classifyShellCommand, shellSandbox: { availability: available, require: false } });
}
const files = (agent = 'agent-a') => taskFiles(state, agent, `bash-${++n}-0123abcd`, true);
const watching = (stallMs = 60_000, stallReportedAt?: number) => ({ stallMs, ...(stallReportedAt !== undefined ? { stallReportedAt } : {}), signal: new AbortController().signal, beat: () => undefined });

test('a task runs in the sandbox on its own; a later watch, from its files alone, sees its output and exit code', async () => {
  const f = files();
  const started = await spawnTask('echo building; echo "$HOME"; touch made.txt; exit 3', ctx(), f, 60_000);
  expect(started).toEqual({ ok: true, outputFile: f.log, containment: 'sandbox' });
  const ended = await watchTask(f, watching());
  expect(ended).toMatchObject({ kind: 'ended', ending: { kind: 'exited', code: 3 } });
  // The sandbox's private home, not the worker's: the same walls as a foreground call.
  expect(ended?.tail).toBe('building\n/tmp/home\n');
  expect(existsSync(path.join(ws, 'made.txt'))).toBe(true);
  expect(readFileSync(f.log, 'utf8')).toBe('building\n/tmp/home\n');
});

test('a read-only agent\'s task cannot write: the sandbox stops it, as it stops a foreground call', async () => {
  const f = files();
  expect(await spawnTask('echo pwned > README.md', ctx({ kind: 'none' }), f, 60_000)).toMatchObject({ ok: true, containment: 'sandbox' });
  const ended = await watchTask(f, watching());
  expect(ended).toMatchObject({ kind: 'ended', ending: { kind: 'exited', code: 1 } });
  expect(ended?.tail).toMatch(/Read-only file system/);
  expect(readFileSync(path.join(ws, 'README.md'), 'utf8')).toBe('original\n');
});

test('a quiet task is reported stalled once per quiet spell; a stop ends it and everything it started', async () => {
  const f = files();
  await spawnTask('echo first; sleep 600 & sleep 600', ctx(), f, 60_000);
  const stalled = await watchTask(f, watching(300));
  expect(stalled).toMatchObject({ kind: 'stalled', bytes: 6, tail: 'first\n' });
  // Reported at 6 bytes: the next watch waits for more output before it reports again; a stop ends it first.
  const again = new AbortController();
  const next = watchTask(f, { ...watching(300, 6), signal: again.signal });
  const pgid = readMeta(f)!.pgid;
  expect(groupAlive(pgid)).toBe(true);
  expect(await stopTask(f)).toMatchObject({ kind: 'ended', ending: { kind: 'stopped' }, tail: 'first\n' });
  expect(groupAlive(pgid)).toBe(false);
  // The watch still following it finds it gone without an exit record.
  expect(await next).toMatchObject({ kind: 'ended', ending: { kind: 'lost' } });
});

test('a cancelled watch leaves the task running; its time limit stops it', async () => {
  const f = files();
  await spawnTask('sleep 600', ctx(), f, 400);
  const abort = new AbortController();
  abort.abort();
  expect(await watchTask(f, { ...watching(), signal: abort.signal })).toBeUndefined();
  expect(groupAlive(readMeta(f)!.pgid)).toBe(true);
  expect(await watchTask(f, watching())).toMatchObject({ kind: 'ended', ending: { kind: 'timeout', afterMs: 400 } });
  expect(groupAlive(readMeta(f)!.pgid)).toBe(false);
});

test('an agent\'s task files are its own; a task id that is not one names no file', async () => {
  const mine = taskFiles(state, 'agent-a', 'bash-1-0123abcd');
  const theirs = taskFiles(state, 'agent-b', 'bash-1-0123abcd');
  expect(mine.log).not.toBe(theirs.log);
  for (const bad of ['../x', 'bash-1-0123abcd/../../etc', 'bash-1', '']) expect(() => taskFiles(state, 'agent-a', bad)).toThrow(BadShellTaskIdError);
  // A watch of a task this host never started says so.
  expect(await watchTask(theirs, watching())).toMatchObject({ kind: 'ended', ending: { kind: 'lost' } });
});
