#!/usr/bin/env node
// npm test's test step: two lanes side by side, because one lane cannot use both cores.
//   temporal lane: `jest --selectProjects temporal` (one dev server; mostly waits on timers,
//                  crash schedules and outages), output live;
//   other lane:    `jest --selectProjects unit`, the self-hosted stack's build (Go, about 7
//                  CPU-minutes on a fresh machine) and `jest --selectProjects stack` at a lower
//                  CPU priority (nice 10), so that the temporal lane's timings stay as they are
//                  alone; then MOVED, long temporal-project files (with a dev server of this
//                  lane's own) at the temporal lane's priority; its output goes to
//                  .forkflow/test-logs/other-lane.log and is printed when the temporal lane ends.
// Each lane runs one test file at a time, as before. Every jest run's dev servers, task
// queues and temp folders are its own, and the stack tests pick ports below the ephemeral
// range, so the lanes cannot collide.
// Every step's TMPDIR is one folder of this run's own, removed when the run ends: the tests'
// workspaces, dev-server files, PostgreSQL clusters and packed consumers come to about 1 GB a
// run, and left in /tmp they filled a disk (the official CI of stop 39 failed with ENOSPC before
// its first test, on a machine whose /tmp held 30 earlier runs).
// Exits non-zero when any step fails; every step runs to the end either way.
import { spawn } from 'node:child_process';
import { chmodSync, createWriteStream, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const logDir = join(root, '.forkflow', 'test-logs');
mkdirSync(logDir, { recursive: true });
const otherLog = join(logDir, 'other-lane.log');
/**
 * Temporal-project files run in the other lane, to even the lanes out: continue-as-new (about
 * 1.5 minutes) and tree-budgets (1 minute on a quiet machine, 6.5 under load: its roots serve
 * every reservation and charge of a 31-agent tree by update). With them the temporal lane
 * took 25–37 minutes and the other 15–22.
 *
 * They run at normal priority, not nice 10: starved to a tenth of a core by the temporal lane,
 * a tree root's workflow tasks took longer than their 10 s timeout, each timed-out task evicted
 * the root from the worker's cache, and the next one replayed its whole history and timed out
 * again (the official CI of stop 38: the 31-agent budget tree never finished; reproduced here
 * with two busy loops beside the file). A Temporal test cannot be starved like a unit test.
 */
const MOVED = ['test/e2e/continue-as-new\\.test\\.ts', 'test/workflow/tree-budgets\\.test\\.ts'].join('|');

// As /tmp is: anyone may pass and write (sticky). The stack's PostgreSQL runs as `postgres` and
// the sandbox's network test as nobody, and both must reach folders made inside it.
const runTmp = mkdtempSync(join(tmpdir(), 'forkflow-run-'));
chmodSync(runTmp, 0o1777);
// A run that was killed (SIGKILL, a lost machine) could not remove its folder: one older than a
// day is no live run's (a run takes under an hour), so it goes now.
for (const name of readdirSync(tmpdir())) {
  if (!name.startsWith('forkflow-run-')) continue;
  const stale = join(tmpdir(), name);
  try {
    if (Date.now() - lstatSync(stale).mtimeMs > 24 * 3600 * 1000) rmSync(stale, { recursive: true, force: true });
  } catch {
    // Another run's, going away meanwhile.
  }
}

/** Bytes under a folder (links not followed); 0 for what vanished meanwhile. */
function bytesUnder(path) {
  try {
    const st = lstatSync(path);
    if (!st.isDirectory()) return st.size;
    return readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0);
  } catch {
    return 0;
  }
}

let removed = false;

/** Removes the run's temp folder (once); says how much it held and what could not be removed. */
function removeRunTmp() {
  if (removed) return;
  removed = true;
  const bytes = bytesUnder(runTmp);
  try {
    rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
    console.log(`run-tests: removed the run's temp folder ${runTmp} (${(bytes / 2 ** 20).toFixed(0)} MiB)`);
  } catch (err) {
    console.log(`run-tests: could not remove the run's temp folder ${runTmp}: ${err.message}`);
  }
}

const children = new Set();
// Every way out removes it: the end of the run, a signal, an uncaught error (exit handlers run synchronously).
process.on('exit', removeRunTmp);
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(code);
  });
}

/** Runs one step; resolves to its outcome (never rejects). */
function step(name, cmd, args, { out, env } = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, TMPDIR: runTmp, ...env }, stdio: out ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    children.add(child);
    if (out) {
      child.stdout.pipe(out, { end: false });
      child.stderr.pipe(out, { end: false });
    }
    const done = (code) => {
      children.delete(child);
      resolve({ name, code, seconds: (Date.now() - started) / 1000 });
    };
    child.on('error', (err) => {
      out?.write(`${name}: ${err.message}\n`);
      done(127);
    });
    child.on('close', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

async function otherLane() {
  const out = createWriteStream(otherLog);
  const results = [];
  const run = async (...args) => {
    out.write(`\n==> ${args[0]}\n`);
    const r = await step(...args, { out });
    out.write(`==> ${r.name}: exit ${r.code} after ${r.seconds.toFixed(0)} s\n`);
    results.push(r);
    return r.code === 0;
  };
  const niced = (args) => ['-n', '10', ...args];
  await run('jest (unit)', 'nice', niced([process.execPath, jest, '--selectProjects', 'unit']));
  // The stack's parts; a failed build is reported here rather than by each stack test.
  const built =
    (await run('build the stack (scripts/install-temporal-server.sh)', 'nice', niced(['bash', join(root, 'scripts', 'install-temporal-server.sh')]))) &&
    (await run('install PostgreSQL (scripts/install-postgres.sh)', 'bash', [join(root, 'scripts', 'install-postgres.sh')]));
  if (built) await run('jest (stack)', 'nice', niced([process.execPath, jest, '--selectProjects', 'stack']));
  else results.push({ name: 'jest (stack)', code: 1, seconds: 0, skipped: 'its build failed' });
  await run('jest (temporal, moved files)', process.execPath, [jest, '--selectProjects', 'temporal', '--testPathPatterns', MOVED]);
  await new Promise((resolve) => out.end(resolve));
  return results;
}

const started = Date.now();
console.log(`run-tests: the temporal lane prints here; the unit and stack lane writes ${otherLog} and is printed after it.`);
const [temporal, other] = await Promise.all([step('jest (temporal)', process.execPath, [jest, '--selectProjects', 'temporal', '--testPathIgnorePatterns', MOVED]), otherLane()]);
process.stdout.write(`\n===== the unit and stack lane (${otherLog}) =====\n`);
process.stdout.write(readFileSync(otherLog, 'utf8'));
const all = [temporal, ...other];
console.log(`\n===== run-tests: ${((Date.now() - started) / 1000).toFixed(0)} s =====`);
for (const r of all) console.log(`${r.code === 0 ? 'ok  ' : 'FAIL'} ${r.name}: ${r.skipped ?? `exit ${r.code}`}, ${r.seconds.toFixed(0)} s`);
removeRunTmp();
process.exit(all.every((r) => r.code === 0) ? 0 : 1);
