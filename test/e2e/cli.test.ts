/**
 * The `forkflow` CLI as an operator uses it (run from source in its own process): tables and
 * `--json`, exit codes, and errors that say what to do.
 */
import { freePort } from '../../src/worker/dev-server';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { runForkflow, startWorkerProcess, type ProcessResult } from '../kit/processes';
import { waitFor } from '../kit/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'cli' });
});
afterAll(() => h.close());

const cli = (...args: string[]): Promise<ProcessResult> => runForkflow(['--address', h.env.address, '--task-queue', h.taskQueue, ...args]);
const json = <T>(r: ProcessResult): T => JSON.parse(r.stdout) as T;

test('fork --wait --json prints the result and exits 0; status, transcript and list agree', async () => {
  const r = await cli('--json', 'fork', '--prompt', 'Say hi.\n@reply hi there', '--label', 'cli-test', '--agent-id', 'cli-one', '--wait');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(json<{ status: string; text: string }>(r)).toMatchObject({ status: 'completed', text: 'hi there' });

  const status = await cli('--json', 'status', 'cli-one');
  expect(json<{ state: string; forkLabel: string }>(status)).toMatchObject({ state: 'completed', forkLabel: 'cli-test' });
  const table = await cli('status', 'cli-one');
  expect(table.stdout).toMatch(/state\s+│\s+completed/);

  const transcript = json<{ role: string }[]>(await cli('--json', 'transcript', 'cli-one'));
  expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant']);

  const rows = await waitFor(async () => {
    const listed = json<{ agentId: string; state: string }[]>(await cli('--json', 'list', '--query', "ForkLabel = 'cli-test'"));
    return listed.length > 0 ? listed : undefined;
  }, 'visibility to list the fork');
  expect(rows[0]).toMatchObject({ agentId: 'cli-one', state: 'completed' });
});

test('FORKFLOW_TASK_QUEUE is the default task queue, as for the worker', async () => {
  // No --task-queue: only the environment names the harness worker's queue.
  const r = await runForkflow(['--address', h.env.address, '--json', 'fork', '--prompt', 'Say hi.\n@reply from env', '--agent-id', 'cli-env-queue', '--wait'], { FORKFLOW_TASK_QUEUE: h.taskQueue });
  expect(r.stderr).toBe('');
  expect(json<{ status: string; text: string }>(r)).toMatchObject({ status: 'completed', text: 'from env' });
  const described = await h.client.workflow.getHandle('cli-env-queue').describe();
  expect(described.taskQueue).toBe(h.taskQueue);
});

test('send queues a message; cancel then result exits 4 with the killed result', async () => {
  const started = await cli('--json', 'fork', '--prompt', 'Hang.\n@sleep 60000 @reply never', '--agent-id', 'cli-two');
  expect(json<{ agentId: string }>(started).agentId).toBe('cli-two');
  await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Hang.'));

  const sent = await cli('send', 'cli-two', 'a note', '--summary', 'note');
  expect(sent.stdout).toContain('queued for cli-two');
  expect((await h.forkflow.status('cli-two')).pendingMessages).toBe(1);

  expect((await cli('cancel', 'cli-two')).status).toBe(0);
  const result = await cli('--json', 'result', 'cli-two');
  expect(result.status).toBe(4);
  expect(json<{ status: string }>(result).status).toBe('killed');
});

test('errors: a missing directive is a usage error (2), an unknown agent is 3, no server is 5', async () => {
  const usage = await cli('fork', '--label', 'x');
  expect(usage.status).toBe(2);
  expect(usage.stderr).toContain('--prompt');

  const unknown = await cli('status', 'no-such-agent');
  expect(unknown.status).toBe(3);
  expect(unknown.stderr).toContain('forkflow list');

  const badTimeout = await cli('fork', '--prompt', 'x', '--timeout', 'soon');
  expect(badTimeout.status).toBe(2);
  expect(badTimeout.stderr).toContain('--timeout');

  // A worker's model rate is checked before it connects: without a queue it would limit nothing.
  const rateAlone = await cli('worker', '--model-rate', '60');
  expect([rateAlone.status, lines(rateAlone)]).toEqual([2, ['forkflow: a model rate needs a model queue (--model-queue or FORKFLOW_MODEL_QUEUE)']]);
  const badRate = await cli('worker', '--model-queue', 'models', '--model-rate', 'fast');
  expect(badRate.status).toBe(2);
  expect(badRate.stderr).toContain('--model-rate');

  const down = await runForkflow(['--address', '127.0.0.1:1', '--outage-deadline', '1s', 'status', 'x']);
  expect(down.status).toBe(5);
  expect(down.stderr).toContain('forkflow dev');
});

/** stderr as lines, without the trailing newline. */
const lines = (r: ProcessResult): string[] => r.stderr.split('\n').filter((l) => l !== '');

test('every error is one line with its exit code; --debug adds the stack', async () => {
  const dead = `127.0.0.1:${await freePort()}`;
  const down = await runForkflow(['--address', dead, '--outage-deadline', '1s', 'status', 'x']);
  expect(down.status).toBe(5);
  expect(lines(down)).toHaveLength(1);
  expect(down.stderr).toMatch(new RegExp(`^forkflow: Cannot reach Temporal at ${dead.replace(/\./g, '\\.')}: no answer for`));
  expect(down.stderr).not.toMatch(/^\s+at /m);

  const debugged = await runForkflow(['--address', dead, '--debug', 'status', 'x'], { FORKFLOW_OUTAGE_DEADLINE: '1s' });
  expect(debugged.status).toBe(5);
  expect(lines(debugged)[0]).toMatch(/^forkflow: Cannot reach Temporal/);
  expect(debugged.stderr).toContain('TemporalUnavailableError: Temporal at');
  expect(debugged.stderr).toMatch(/^\s+at /m);

  // A server-side refusal: the transcript query of a skipTranscript fork (QueryNotRegisteredError in the SDK).
  await h.forkflow.fork({ agentId: 'cli-secret', prompt: 'Quiet.\n@reply ok', skipTranscript: true }, { mode: 'sync' });
  const refused = await cli('transcript', 'cli-secret');
  expect(refused.status).toBe(1);
  expect(lines(refused)).toEqual(['forkflow: query failed: Agent cli-secret runs with skipTranscript: its transcript is not served.']);

  const unknown = await cli('result', 'no-such-agent');
  expect(unknown.status).toBe(3);
  expect(lines(unknown)).toHaveLength(1);
  expect(unknown.stderr).toMatch(/^forkflow: No agent "no-such-agent" found/);

  const badDeadline = await cli('--outage-deadline', 'soon', 'status', 'cli-secret');
  expect(badDeadline.status).toBe(2);
  expect(lines(badDeadline)).toEqual(['forkflow: --outage-deadline: expected a duration like 30s, 5m or 0s, got "soon"']);
});

test('a root worker without a pids cgroup names, at start, a workspace user nobody cannot enter', async () => {
  // A workspace inside a private folder, as a clone under /root or a `mktemp -d` folder is.
  const ws = join(tempDir('private'), 'ws');
  mkdirSync(ws);
  const worker = await startWorkerProcess({ address: h.env.address, taskQueue: `${h.taskQueue}-reach`, modelUrl: 'http://127.0.0.1:1', workspace: ws, bundlePath: h.env.bundlePath, extraEnv: { FORKFLOW_SANDBOX_CGROUP: 'off' } });
  await worker.kill();
  // Only a root worker runs read-only calls as nobody; any other worker's own user enters its workspace.
  const warned = worker.output().includes(`user nobody cannot enter the workspace ${ws}: this worker runs as root without a pids cgroup`);
  expect(warned).toBe(process.getuid?.() === 0);
  rmSync(dirname(ws), { recursive: true, force: true });
});

test('schema prints the JSON Schema of the workflow input', async () => {
  const schema = json<{ properties: Record<string, unknown>; required: string[] }>(await cli('schema'));
  expect(schema.required).toContain('prompt');
  expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['prompt', 'parent', 'forkLabel', 'maxTurns', 'timeout', 'toolFilter', 'workspace', 'modelQueue']));
});
