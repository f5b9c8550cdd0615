#!/usr/bin/env node
// npm test's test step: two lanes side by side, because one lane cannot use both cores.
//   temporal lane: `jest --selectProjects temporal` (one dev server; mostly waits on timers,
//                  crash schedules and outages), output live;
//   other lane:    `jest --selectProjects unit` (CPU-bound), then the self-hosted stack's
//                  build (Go, minutes on a fresh machine, at a lower priority than the
//                  temporal lane) and `jest --selectProjects stack`; its output goes to
//                  .forkflow/test-logs/other-lane.log and is printed when the temporal lane ends.
// Each lane runs one test file at a time, as before; the stack tests pick ports below the
// ephemeral range, so they cannot collide with the dev servers' OS-assigned ones.
// Exits non-zero when any step fails; every step runs to the end either way.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const logDir = join(root, '.forkflow', 'test-logs');
mkdirSync(logDir, { recursive: true });
const otherLog = join(logDir, 'other-lane.log');

const children = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(130);
  });
}

/** Runs one step; resolves to its outcome (never rejects). */
function step(name, cmd, args, { out, env } = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: out ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
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
  await run('jest (unit)', process.execPath, [jest, '--selectProjects', 'unit']);
  // The stack's parts; a failed build is reported here rather than by each stack test.
  const built =
    (await run('build the stack (scripts/install-temporal-server.sh)', 'nice', ['-n', '10', 'bash', join(root, 'scripts', 'install-temporal-server.sh')])) &&
    (await run('install PostgreSQL (scripts/install-postgres.sh)', 'bash', [join(root, 'scripts', 'install-postgres.sh')]));
  if (built) await run('jest (stack)', process.execPath, [jest, '--selectProjects', 'stack']);
  else results.push({ name: 'jest (stack)', code: 1, seconds: 0, skipped: 'its build failed' });
  await new Promise((resolve) => out.end(resolve));
  return results;
}

const started = Date.now();
console.log(`run-tests: the temporal lane prints here; the unit and stack lane writes ${otherLog} and is printed after it.`);
const [temporal, other] = await Promise.all([step('jest (temporal)', process.execPath, [jest, '--selectProjects', 'temporal']), otherLane()]);
process.stdout.write(`\n===== the unit and stack lane (${otherLog}) =====\n`);
process.stdout.write(readFileSync(otherLog, 'utf8'));
const all = [temporal, ...other];
console.log(`\n===== run-tests: ${((Date.now() - started) / 1000).toFixed(0)} s =====`);
for (const r of all) console.log(`${r.code === 0 ? 'ok  ' : 'FAIL'} ${r.name}: ${r.skipped ?? `exit ${r.code}`}, ${r.seconds.toFixed(0)} s`);
process.exit(all.every((r) => r.code === 0) ? 0 : 1);
