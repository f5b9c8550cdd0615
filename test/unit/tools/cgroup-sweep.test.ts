/**
 * Sweeping leftover per-call cgroups at a worker's start (src/activities/tools/sandbox/limits.ts)
 * must not take another worker's fresh one: a cgroup is created empty, and the call's shell
 * enters it a moment later. Here on plain folders, which the sweep treats the same way.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SWEEP_MIN_AGE_MS, sweepCgroups } from '../../../src/activities/tools/sandbox/limits';

test('an empty call cgroup is swept only once it is old enough; a non-empty or foreign one never', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cgroup-sweep-'));
  const now = Date.now();
  const fresh = path.join(dir, randomUUID());
  const old = path.join(dir, randomUUID());
  const busy = path.join(dir, randomUUID());
  const foreign = path.join(dir, 'not-a-call');
  for (const d of [fresh, old, busy, foreign]) mkdirSync(d);
  writeFileSync(path.join(busy, 'member'), '');
  const past = new Date(now - SWEEP_MIN_AGE_MS - 1_000);
  for (const d of [old, busy, foreign]) utimesSync(d, past, past);

  sweepCgroups({ kind: 'cgroup', dir }, now);

  expect(existsSync(fresh)).toBe(true);
  expect(existsSync(old)).toBe(false);
  expect(existsSync(busy)).toBe(true);
  expect(existsSync(foreign)).toBe(true);
  // The fresh one goes too, once as old.
  sweepCgroups({ kind: 'cgroup', dir }, now + SWEEP_MIN_AGE_MS + 1_000);
  expect(existsSync(fresh)).toBe(false);
});
