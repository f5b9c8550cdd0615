/**
 * Closing a connection while a call waits to be retried (src/client/connection-options.ts).
 * With the SDK's defaults alone the retry timer throws "Channel has been shut down" from
 * nowhere and the process ends (how two temporal test files failed after all their tests had
 * passed: a call still retrying when their harness closed its client). Built as forkflow
 * builds its connections, the call is rejected CANCELLED and the process goes on.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

function run(mode: 'bare' | 'guarded') {
  const r = spawnSync(process.execPath, ['-r', require.resolve('tsx/cjs'), join(__dirname, 'fixtures', 'close-while-retrying.ts'), mode], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("with the SDK's defaults, the retry after close crashes the process", () => {
  const r = run('bare');
  expect(r.stdout).toContain('first attempt: UNAVAILABLE; closing the connection');
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('Channel has been shut down');
  expect(r.stdout).not.toContain('rejected');
});

test('built as forkflow builds its connections, the waiting call is rejected CANCELLED and the process goes on', () => {
  const r = run('guarded');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^rejected 1 .*the connection was closed before \/temporal\.api\.workflowservice\.v1\.WorkflowService\/GetSystemInfo was retried$/m);
});
