/**
 * autoDream's pure parts: configuration bounds and defaults, each gate's verdict at its
 * boundary, staleness, the verdict of each way a fork can end, and the visibility queries.
 */
import { validateDreamConfig, type DreamConfig } from '../../../src/shared/dream/config';
import { enabledGate, sessionsGate, staleAfterMs, throttleGate, timeGate } from '../../../src/shared/dream/gates';
import { dreamLockId, sessionsQuery } from '../../../src/shared/dream/names';
import { verdictOf } from '../../../src/shared/dream/outcome';
import { consolidationPrompt } from '../../../src/shared/dream/prompt';
import type { ForkResult } from '../../../src/shared/wire/status';

const HOUR = 3_600_000;
const T = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function config(extra: Record<string, unknown> = {}): DreamConfig {
  const v = validateDreamConfig({ memoryScope: 'team', memoryDir: '/srv/memory/team', ...extra });
  if (!v.ok) throw new Error(v.issues.join('; '));
  return v.value;
}

test('defaults and bounds of the configuration', () => {
  expect(config()).toMatchObject({ enabled: true, minHours: 24, minSessions: 5, scanThrottle: '10m', delivery: 'batch', forkTimeout: '24h', indexFile: 'MEMORY.md', manual: false });
  // Interactive: a dream someone watches gets the short limit; a limit given is kept either way.
  expect(config({ delivery: 'interactive' })).toMatchObject({ delivery: 'interactive', forkTimeout: '15m' });
  expect(config({ forkTimeout: '2h' })).toMatchObject({ delivery: 'batch', forkTimeout: '2h' });
  // Parsing what parsing produced changes nothing (the client and the workflow both validate).
  expect(validateDreamConfig(config())).toEqual({ ok: true, value: config() });
  expect(validateDreamConfig({ memoryScope: 'team', memoryDir: '/m', delivery: 'later' }).ok).toBe(false);
  const bad = validateDreamConfig({ memoryScope: "te'am", memoryDir: 'memory', minHours: 0.99, minSessions: 0, forkTimeout: '9s', indexFile: '../x' });
  expect(bad.ok).toBe(false);
  const issues = bad.ok ? [] : bad.issues;
  for (const field of ['memoryScope', 'memoryDir', 'minHours', 'minSessions', 'forkTimeout', 'indexFile']) expect(issues.some((i) => i.startsWith(field))).toBe(true);
  expect(validateDreamConfig({ memoryScope: 'team', memoryDir: '/m', forkTimeout: '10s', minHours: 1, minSessions: 1 }).ok).toBe(true);
});

test('each gate at its boundary', () => {
  expect(enabledGate(config({ enabled: false }))).toMatchObject({ gate: 'disabled' });
  expect(enabledGate(config())).toBeNull();

  expect(timeGate(config(), T, null)).toBeNull(); // never consolidated
  expect(timeGate(config(), T, iso(T - 24 * HOUR))).toBeNull();
  expect(timeGate(config(), T, iso(T - 24 * HOUR + 1))).toMatchObject({ gate: 'time', hoursSinceLast: 24 });
  expect(timeGate(config(), T, iso(T + HOUR))).toMatchObject({ gate: 'time' }); // a future mark never passes

  expect(throttleGate(config(), T, null)).toBeNull();
  expect(throttleGate(config(), T, iso(T - 10 * 60_000))).toBeNull();
  expect(throttleGate(config(), T, iso(T - 9 * 60_000))).toMatchObject({ gate: 'throttle', nextScanAt: iso(T + 60_000) });

  expect(sessionsGate(config(), 5, null)).toBeNull();
  expect(sessionsGate(config(), 4, iso(T))).toMatchObject({ gate: 'sessions', sessions: 4 });
  expect(staleAfterMs(config({ forkTimeout: '1m', lockStaleGrace: '30s' }))).toBe(90_000);
});

const result = (over: Partial<ForkResult>): ForkResult => ({
  agentId: 'dream-team',
  status: 'completed',
  text: '',
  usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  turns: 1,
  toolUses: 0,
  durationMs: 1,
  stopReason: 'end_turn',
  maxTurnsReached: false,
  forkLabel: 'auto-dream',
  ...over,
});

test('how each fork end is judged', () => {
  expect(verdictOf({ kind: 'returned', result: result({}) })).toEqual({ kind: 'completed' });
  expect(verdictOf({ kind: 'returned', result: result({ status: 'timeout', stopReason: 'timeout' }) }).kind).toBe('timed_out');
  expect(verdictOf({ kind: 'returned', result: result({ status: 'killed', stopReason: 'cancelled' }) })).toMatchObject({ kind: 'errored', error: expect.stringMatching(/cancelled/) as unknown });
  expect(verdictOf({ kind: 'failed', result: result({ status: 'failed', stopReason: 'escape_audit_failed', error: 'Escape audit failed: /x' }) })).toEqual({ kind: 'escape_audit_failed', error: 'Escape audit failed: /x' });
  expect(verdictOf({ kind: 'failed', result: result({ status: 'failed', stopReason: 'error', error: '400' }) })).toEqual({ kind: 'errored', error: '400' });
  expect(verdictOf({ kind: 'server_timeout', message: 'm' })).toEqual({ kind: 'timed_out', error: 'm' });
  expect(verdictOf({ kind: 'lost', message: 'terminated' })).toEqual({ kind: 'errored', error: 'terminated' });
});

test('sessions exclude forkflow’s own memory forks and refuse a scope that could break the query', () => {
  const q = sessionsQuery('team', iso(T - HOUR), iso(T));
  expect(q).toContain("ForkMemoryScope = 'team'");
  expect(q).toContain("ExecutionStatus != 'Running'");
  expect(q).toContain("NOT IN ('forkflow:auto-dream', 'forkflow:away-summary')");
  expect(q).toContain(`CloseTime > '${iso(T - HOUR)}'`);
  expect(sessionsQuery('team', null, iso(T))).not.toContain('CloseTime >');
  expect(() => sessionsQuery("x' OR 1=1", null, iso(T))).toThrow();
  expect(dreamLockId('team')).toBe('dream-team');
});

test('the prompt has four phases, names the staged sessions and carries the extra instructions last', () => {
  const text = consolidationPrompt({ scope: 'team', memoryDir: '/m', indexFile: 'MEMORY.md', maxIndexLines: 50, sessionsDir: '/s', sessionsStaged: 3, since: null, extraInstructions: '@reply ok' });
  expect(text.match(/^\d\. (Orient|Gather recent signal|Consolidate|Prune and index)\./gm)).toHaveLength(4);
  expect(text).toContain('/s/INDEX.md');
  expect(text).toContain('at most 50 lines');
  expect(text.trimEnd().endsWith('@reply ok')).toBe(true);
  expect(text.split('\n').slice(0, -1).some((l) => l.trimStart().startsWith('@'))).toBe(false);
});
