/**
 * A real race: a separate process flips a symlink and swaps a directory for a symlink in
 * a tight loop, between "inside the memory directory" and "outside", while hundreds of
 * FileWrite/FileEdit calls run concurrently through those paths. Nothing may ever land
 * outside: an inotify watch on the outside directory must see no event but our own
 * sentinel, and the outside files must be byte-for-byte unchanged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { isInside } from '../../../src/activities/tools/paths';
import type { ToolOutcome } from '../../../src/activities/tools/types';
import { run } from './kit';
import { memoryWorld, type MemoryWorld } from './memory-kit';

// Runs in the child. Each cycle: `link` -> inside, `link` -> outside (atomic renames of a
// fresh symlink); `d` (a real directory) renamed away and replaced by a symlink to
// outside, then restored; the same for `a`, which holds `sub/` as `outside` does, so that
// writes to `a/sub/x` meet the swap in a middle component (O_NOFOLLOW alone would not
// notice: only the /proc/self/fd check does). Prints "ready" after the first cycle.
const FLIPPER = `
const fs = require('node:fs');
const [mem, outside] = process.argv.slice(1);
const link = mem + '/link', tmp = mem + '/link.tmp';
let cycles = 0, stop = false;
process.on('SIGTERM', () => { stop = true; });
const flipLink = (to) => { fs.symlinkSync(to, tmp); fs.renameSync(tmp, link); };
function cycle() {
  flipLink(mem + '/real');
  flipLink(outside);
  for (const dir of [mem + '/d', mem + '/a']) {
    fs.renameSync(dir, dir + '.real'); fs.symlinkSync(outside, dir);
    fs.unlinkSync(dir); fs.renameSync(dir + '.real', dir);
  }
  cycles++;
}
cycle();
process.stdout.write('ready\\n');
(function loop() {
  for (let i = 0; i < 200 && !stop; i++) cycle();
  if (stop) { flipLink(mem + '/real'); process.stdout.write('cycles ' + cycles + '\\n'); process.exit(0); }
  setImmediate(loop); // lets the SIGTERM handler run
})();
`;

let w: MemoryWorld;
let flipper: ChildProcess | undefined;
let watchers: FSWatcher[] = [];
beforeEach(() => {
  w = memoryWorld();
});
afterEach(() => {
  for (const watcher of watchers) watcher.close();
  watchers = [];
  flipper?.kill('SIGKILL');
  w.base.remove();
});

function startFlipper(): Promise<void> {
  flipper = spawn(process.execPath, ['-e', FLIPPER, w.mem, w.outside], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    flipper?.stdout?.once('data', (d: Buffer) => (d.toString().startsWith('ready') ? resolve() : reject(new Error(d.toString()))));
    flipper?.once('exit', (code) => reject(new Error(`flipper exited early (${code})`)));
  });
}

function stopFlipper(): Promise<number> {
  return new Promise((resolve) => {
    let out = '';
    flipper?.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    flipper?.once('exit', () => resolve(Number(/cycles (\d+)/.exec(out)?.[1] ?? 0)));
    flipper?.kill('SIGTERM');
  });
}

it('0 writes outside the memory directory while paths flip between inside and outside', async () => {
  const dirs = ['real', 'd', 'a/sub'].map((d) => path.join(w.mem, d));
  const outsideDirs = [w.outside, path.join(w.outside, 'sub')];
  for (const dir of [...dirs, ...outsideDirs]) mkdirSync(dir, { recursive: true });
  // Same names and content on both sides: an edit or write that followed a flip would succeed.
  for (const dir of [...dirs, ...outsideDirs]) writeFileSync(path.join(dir, 'victim.md'), 'ORIGINAL victim\n');
  const before = w.fingerprint();

  const events: string[] = [];
  const sentinels = outsideDirs.map((dir) => {
    let seen: () => void = () => undefined;
    const promise = new Promise<void>((resolve) => (seen = resolve));
    watchers.push(
      watch(dir, (event, name) => {
        if (name === 'sentinel') seen();
        else events.push(`${event}:${dir}/${String(name)}`);
      }),
    );
    return promise;
  });

  await startFlipper();
  const ctx = w.ctx();
  const attempts: Promise<ToolOutcome>[] = [];
  let wins = 0;
  let denials = 0;
  const touched: string[] = [];
  const tally = (o: ToolOutcome): void => {
    if (o.isError) denials++;
    else {
      wins++;
      touched.push(...(o.touched ?? []));
    }
  };
  // Keep going until the race has visibly gone both ways, with a floor and a ceiling.
  for (let round = 0; round < 100 && (attempts.length < 500 || wins < 20 || denials < 20); round++) {
    const batch: Promise<ToolOutcome>[] = [];
    for (let i = 0; i < 10; i++) {
      const n = round * 10 + i;
      batch.push(run('FileWrite', { file_path: path.join(w.mem, 'link', `f${n}.md`), content: 'PWNED\n' }, ctx));
      batch.push(run('FileWrite', { file_path: path.join(w.mem, 'd', `g${n}.md`), content: 'PWNED\n' }, ctx));
      batch.push(run('FileWrite', { file_path: path.join(w.mem, 'a', 'sub', `h${n}.md`), content: 'PWNED\n' }, ctx));
      batch.push(run('FileEdit', { file_path: path.join(w.mem, ['link', 'd', 'a/sub'][n % 3] ?? 'd', 'victim.md'), old_string: 'ORIGINAL', new_string: 'ORIGINAL!' }, ctx));
      batch.push(run('FileWrite', { file_path: path.join(w.mem, ['link', 'd', 'a/sub'][n % 3] ?? 'd', 'victim.md'), content: 'ORIGINAL victim\n' }, ctx));
    }
    for (const o of await Promise.all(batch)) tally(o);
    attempts.push(...batch);
  }
  const cycles = await stopFlipper();

  // inotify events arrive in order: once our sentinel's event is seen, any earlier write
  // outside would have been reported too.
  for (const dir of outsideDirs) writeFileSync(path.join(dir, 'sentinel'), 'ours');
  await Promise.all(sentinels);
  expect(events).toEqual([]);
  expect(readdirSync(w.outside).sort()).toEqual(['secret.md', 'sentinel', 'sub', 'victim.md']);
  expect(readdirSync(path.join(w.outside, 'sub')).sort()).toEqual(['sentinel', 'victim.md']);
  const after = w.fingerprint();
  for (const dir of outsideDirs) delete after[path.join(dir, 'sentinel')];
  expect(after).toEqual(before);

  // The race was real: the flipper ran throughout, and both outcomes happened.
  expect(attempts.length).toBeGreaterThanOrEqual(500);
  expect(cycles).toBeGreaterThan(100);
  expect(wins).toBeGreaterThanOrEqual(20);
  expect(denials).toBeGreaterThanOrEqual(20);
  for (const p of touched) expect(isInside(p, w.mem)).toBe(true);
  console.log(`race: ${attempts.length} calls, ${wins} written inside, ${denials} denied, ${cycles} flip cycles`);
});
