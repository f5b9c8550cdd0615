/**
 * The OS sandbox as a fork meets it: a read-only fork's Bash runs sandboxed and its status
 * says so; a workspace fork can opt in (its workspace writable, the rest read-only); on a
 * worker without a sandbox the same calls run behind the classifier alone
 * (`containment: 'classifier-only'`), or are refused for a fork that set `requireSandbox`.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { blocksOf, type ToolResultBlock } from '../../src/shared/anthropic';
import { probeSandbox } from '../../src/activities/tools/sandbox';
import { startHarness, tempDir, type Harness } from '../kit/env';

jest.setTimeout(60_000);

let sandboxed: Harness;
let plain: Harness;
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
    sandbox: () => Promise.resolve({ available: false, reason: 'test: this worker has no sandbox' }),
  });
});
afterAll(async () => {
  await sandboxed.close();
  await plain.close();
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

test('without a sandbox: classifier-only containment, or a refusal under requireSandbox', async () => {
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
