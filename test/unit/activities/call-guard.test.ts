/**
 * The call guard (src/activities/call-guard.ts), in processes of their own: an error thrown
 * from a tool call's machinery, or a promise it left rejected, stops that call with
 * CallMachineryError and the process lives on; the other calls are untouched; an error after
 * its call ended is logged and dropped; an error that belongs to no call still ends the
 * process with Node's exit code 1, as without the guard.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const child = path.join(__dirname, '..', '..', 'kit', 'guarded-process.ts');

function scenario(name: string): { status: number | null; lines: string[]; stderr: string } {
  const out = spawnSync(process.execPath, ['-r', require.resolve('tsx/cjs'), child, name], { encoding: 'utf8', timeout: 60_000 });
  return { status: out.status, lines: out.stdout.split('\n').filter(Boolean), stderr: out.stderr };
}

test('a call that goes well is untouched', () => {
  expect(scenario('ordinary')).toMatchObject({ status: 0, lines: ['resolved: value', 'alive'] });
});

test.each([
  ['thrown', 'TypeError: thrown from a callback'],
  ['rejected', 'RangeError: left rejected'],
])('an error %s by a call\'s machinery stops that call, and the process lives on', (name, error) => {
  expect(scenario(name)).toMatchObject({
    status: 0,
    lines: [`log: a tool call's machinery raised an error; the call is stopped, the worker goes on: ${error}`, `rejected: CallMachineryError: ${error}`, 'alive'],
  });
});

test('another call in flight is not stopped', () => {
  expect(scenario('two calls').lines).toEqual([
    "log: a tool call's machinery raised an error; the call is stopped, the worker goes on: Error: one call fails",
    'rejected: CallMachineryError: Error: one call fails',
    'resolved: the other call finished',
    'alive',
  ]);
});

test('an error after its call ended is logged and dropped', () => {
  expect(scenario('after the call')).toMatchObject({
    status: 0,
    lines: ['resolved: done early', 'log: a tool call that already ended raised an error in its machinery; dropped: Error: too late', 'alive'],
  });
});

test.each([
  ['outside any call', 'not a tool call'],
  ['rejected outside any call', 'nobody awaits this'],
])('an error %s still ends the process, as Node would', (name, message) => {
  const out = scenario(name);
  expect(out.status).toBe(1);
  expect(out.lines).not.toContain('alive');
  expect(out.stderr).toContain(`Error: ${message}`);
});
