/**
 * The OS sandbox as a fork meets it: every fork's Bash runs sandboxed and its status says
 * so — a read-only fork's, and the default fork's (a plain start with the minimal input),
 * whose workspace is writable and nothing else; on a worker without a sandbox the calls are
 * refused, unless the worker opted out (then a read-only fork's run behind the classifier
 * alone, `containment: 'classifier-only'`), and still refused for a fork that set `requireSandbox`.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blocksOf, type ToolResultBlock } from '../../src/shared/messages-api/anthropic';
import { probeSandbox } from '../../src/activities/tools/sandbox';
import { startHarness, tempDir, type Harness } from '../kit/env';

let sandboxed: Harness;
let plain: Harness;
let refusing: Harness;
let ws: string;
beforeAll(async () => {
  expect(await probeSandbox()).toMatchObject({ available: true });
  ws = realpathSync(tempDir('sandbox-wf'));
  mkdirSync(join(ws, 'outside'));
  writeFileSync(join(ws, 'outside', 'keep.txt'), 'keep\n');
  mkdirSync(join(ws, 'repo'));
  writeFileSync(join(ws, 'repo', 'README.md'), 'hello\n');
  sandboxed = await startHarness({ name: 'sandbox-on', workspaceRoot: join(ws, 'repo') });
  plain = await startHarness({
    name: 'sandbox-off',
    workspaceRoot: join(ws, 'repo'),
    sandbox: () => Promise.resolve({ available: false, reason: 'test: this worker has no sandbox', allowUnsandboxed: true }),
  });
  refusing = await startHarness({
    name: 'sandbox-none',
    workspaceRoot: join(ws, 'repo'),
    sandbox: () => Promise.resolve({ available: false, reason: 'test: this worker has no sandbox' }),
  });
});
afterAll(async () => {
  await sandboxed.close();
  await plain.close();
  await refusing.close();
});

const tool = (name: string, input: unknown) => `@tool ${name} ${JSON.stringify(input)}`;

async function toolResults(h: Harness, agentId: string): Promise<{ isError: boolean; text: string }[]> {
  const transcript = await h.forkflow.transcript(agentId);
  return transcript
    .flatMap((m) => (m.role === 'user' ? blocksOf(m) : []))
    .filter((b): b is ToolResultBlock => b.type === 'tool_result')
    .map((b) => ({ isError: Boolean(b.is_error), text: typeof b.content === 'string' ? b.content : JSON.stringify(b.content) }));
}

test("a read-only fork's Bash runs in the sandbox, and status says so", async () => {
  // `ls /proc` inside the sandbox lists only the sandbox's own few processes.
  const prompt = ['Look.', tool('Bash', { command: 'cat README.md; ls /proc | grep -c "^[0-9]"' }), '@reply looked'].join('\n');
  const result = await sandboxed.forkflow.fork({ agentId: 'ro-sandboxed', prompt, toolFilter: 'readOnly' }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  const [bash] = await toolResults(sandboxed, 'ro-sandboxed');
  expect(bash!.isError).toBe(false);
  const processes = Number(bash!.text.split('\n')[1]);
  expect(processes).toBeLessThan(10);
  expect((await sandboxed.forkflow.status('ro-sandboxed')).containment).toBe('sandbox');
});

test('a workspace fork that opts in writes its workspace and nothing else', async () => {
  const prompt = ['Write.', tool('Bash', { command: 'echo changed > README.md; echo x > ../outside/keep.txt' }), '@reply wrote'].join('\n');
  const result = await sandboxed.forkflow.fork({ agentId: 'ws-sandboxed', prompt, sandbox: { network: false } }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  expect(readFileSync(join(ws, 'repo', 'README.md'), 'utf8')).toBe('changed\n');
  expect(readFileSync(join(ws, 'outside', 'keep.txt'), 'utf8')).toBe('keep\n');
  // Outside the workspace is read-only, or (under /tmp, as here) not there at all.
  const [bash] = await toolResults(sandboxed, 'ws-sandboxed');
  expect(bash!.isError).toBe(true);
  expect(bash!.text).toMatch(/Read-only file system|No such file or directory/);
  expect((await sandboxed.forkflow.status('ws-sandboxed')).containment).toBe('sandbox');
});

test('the default fork (minimal input) runs Bash in the sandbox: its workspace writable, nothing else, the worker out of sight', async () => {
  process.env.FORKFLOW_TEST_WORKER_SECRET = 'sk-worker-secret';
  try {
    const prompt = ['Go.', tool('Bash', { command: 'echo mine > mine.txt; echo x > ../outside/keep.txt; cat /proc/$PPID/environ /proc/1/environ | tr "\\0" "\\n" | grep -c WORKER_SECRET; ps eww 2>/dev/null | grep -c WORKER_SECRET' }), '@reply done'].join('\n');
    const result = await sandboxed.forkflow.fork({ agentId: 'default-fork', prompt }, { mode: 'sync' });
    expect(result.status).toBe('completed');
    expect(readFileSync(join(ws, 'repo', 'mine.txt'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(ws, 'outside', 'keep.txt'), 'utf8')).toBe('keep\n');
    const [bash] = await toolResults(sandboxed, 'default-fork');
    expect(bash!.text).not.toContain('sk-worker-secret');
    expect(bash!.text).toMatch(/^0$/m);
    const status = await sandboxed.forkflow.status('default-fork');
    expect(status).toMatchObject({ containment: 'sandbox', permissionMode: 'acceptEdits' });
  } finally {
    delete process.env.FORKFLOW_TEST_WORKER_SECRET;
  }
});

test('a worker that cannot sandbox refuses Bash, saying why, unless it was started to run without it', async () => {
  const prompt = ['Look.', tool('Bash', { command: 'ls' }), '@reply looked'].join('\n');
  await refusing.forkflow.fork({ agentId: 'no-sandbox-ro', prompt, toolFilter: 'readOnly' }, { mode: 'sync' });
  await refusing.forkflow.fork({ agentId: 'no-sandbox-rw', prompt }, { mode: 'sync' });
  for (const id of ['no-sandbox-ro', 'no-sandbox-rw']) {
    const [refused] = await toolResults(refusing, id);
    expect(refused).toMatchObject({ isError: true });
    expect(refused!.text).toContain('test: this worker has no sandbox');
  }
});

test('opted out of the sandbox: classifier-only containment, or a refusal under requireSandbox', async () => {
  const prompt = ['Look.', tool('Bash', { command: 'ls' }), '@reply looked'].join('\n');
  const loose = await plain.forkflow.fork({ agentId: 'ro-plain', prompt, toolFilter: 'readOnly' }, { mode: 'sync' });
  expect(loose.status).toBe('completed');
  expect((await toolResults(plain, 'ro-plain'))[0]).toMatchObject({ isError: false });
  expect((await plain.forkflow.status('ro-plain')).containment).toBe('classifier-only');

  const strict = await plain.forkflow.fork({ agentId: 'ro-strict', prompt, toolFilter: 'readOnly', requireSandbox: true }, { mode: 'sync' });
  expect(strict.status).toBe('completed');
  const [refused] = await toolResults(plain, 'ro-strict');
  expect(refused!.isError).toBe(true);
  expect(refused!.text).toContain('requireSandbox');
  expect(refused!.text).toContain('test: this worker has no sandbox');
});
