/**
 * Containment as a fork meets it: a memory agent (autoMem filter) that tries to write outside
 * its memory directory gets actionable is_error results and keeps going; read-only shell
 * commands run, writing ones don't; an escape found by the post-run audit fails the run; a
 * read-only agent cannot write at all.
 */
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { blocksOf, type ToolResultBlock } from '../../src/shared/messages-api/anthropic';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { recordHistory } from '../kit/histories';

let h: Harness;
let ws: string;
let mem: string;
let outside: string;
beforeAll(async () => {
  ws = realpathSync(tempDir('containment'));
  mem = join(ws, 'memory');
  outside = join(ws, 'outside');
  mkdirSync(mem);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'original');
  symlinkSync(outside, join(mem, 'link-out'));
  h = await startHarness({ name: 'containment', workspaceRoot: ws });
});
afterAll(() => h.close());

/** The tool results a fork got, in order: is_error flag and text. */
async function toolResults(agentId: string): Promise<{ isError: boolean; text: string }[]> {
  const transcript = await h.forkflow.transcript(agentId);
  return transcript
    .flatMap((m) => (m.role === 'user' ? blocksOf(m) : []))
    .filter((b): b is ToolResultBlock => b.type === 'tool_result')
    .map((b) => ({ isError: Boolean(b.is_error), text: typeof b.content === 'string' ? b.content : JSON.stringify(b.content) }));
}

const tool = (name: string, input: unknown) => `@tool ${name} ${JSON.stringify(input)}`;

test('a memory agent writes inside its directory only; every escape attempt is an is_error it can act on', async () => {
  const prompt = [
    'Consolidate memories.',
    tool('FileWrite', { file_path: join(mem, 'notes.md'), content: '# notes\n' }),
    tool('FileWrite', { file_path: join(outside, 'secret.txt'), content: 'pwned' }),
    tool('FileWrite', { file_path: 'memory/relative.md', content: 'x' }),
    tool('FileEdit', { file_path: join(mem, '..', 'outside', 'secret.txt'), old_string: 'original', new_string: 'pwned' }),
    tool('FileWrite', { file_path: join(mem, 'link-out', 'planted.md'), content: 'x' }),
    tool('Bash', { command: `echo pwned > ${join(outside, 'secret.txt')}` }),
    tool('Bash', { command: `ls ${mem}` }),
    tool('FileEdit', { file_path: join(mem, 'notes.md'), old_string: '# notes', new_string: '# consolidated notes' }),
    '@reply done',
  ].join('\n');
  const result = await h.forkflow.fork({ agentId: 'mem-ok', prompt, toolFilter: { kind: 'autoMem', memoryDir: mem }, maxTurns: 20 }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'done' });

  const results = await toolResults('mem-ok');
  expect(results.map((r) => r.isError)).toEqual([false, true, true, true, true, true, false, false]);
  expect(results[1]!.text).toMatch(/outside/i);
  expect(results[2]!.text).toMatch(/absolute/i);
  expect(results[5]!.text).toMatch(/read-only|redirect/i);
  expect(results[6]!.text).toContain('notes.md');

  expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('original');
  expect(existsSync(join(outside, 'planted.md'))).toBe(false);
  expect(readFileSync(join(mem, 'notes.md'), 'utf8')).toBe('# consolidated notes\n');
  expect(result.touched).toEqual([join(mem, 'notes.md')]);
  await recordHistory(h.client.workflow.getHandle('mem-ok'), 'memory-agent-containment');
});

test('a memory agent’s Bash cannot change its memory by any route the audit cannot see (S0-30): each write is refused and nothing changes', async () => {
  const dir = join(mem, 'bash-routes');
  mkdirSync(dir);
  writeFileSync(join(dir, 'MEMORY.md'), '# index\n');
  const commands = [`echo x >> ${dir}/MEMORY.md`, `sed -i 's/index/gone/' ${dir}/MEMORY.md`, `cp ${dir}/MEMORY.md ${dir}/copy.md`, `mv ${dir}/MEMORY.md ${dir}/moved.md`, `ln -s ${join(outside, 'secret.txt')} ${dir}/link.md`];
  const prompt = ['Tidy memories with the shell.', ...commands.map((command) => tool('Bash', { command })), '@reply done'].join('\n');
  const result = await h.forkflow.fork({ agentId: 'mem-bash', prompt, toolFilter: { kind: 'autoMem', memoryDir: mem }, maxTurns: 10 }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  const results = await toolResults('mem-bash');
  expect(results.map((r) => r.isError)).toEqual(commands.map(() => true));
  expect(readFileSync(join(dir, 'MEMORY.md'), 'utf8')).toBe('# index\n');
  expect(['copy.md', 'moved.md', 'link.md'].filter((n) => existsSync(join(dir, n)))).toEqual([]);
  expect(result.touched ?? []).toEqual([]);
});

test('the post-run audit fails the run when a written path has come to lie outside', async () => {
  const target = join(mem, 'moved.md');
  const handle = await h.forkflow.start({
    agentId: 'mem-audit',
    prompt: ['Write then wait.', tool('FileWrite', { file_path: target, content: 'inside' }), '@sleep 3000 @reply done'].join('\n'),
    toolFilter: { kind: 'autoMem', memoryDir: mem },
  });
  // While the second turn is in flight, the written file is swapped for a link to outside.
  await h.model.log.waitFor((e) => e.outcome === 'pending' && JSON.stringify(e.body ?? '').includes('Write then wait.') && (e.body as { messages: unknown[] }).messages.length === 3);
  rmSync(target);
  symlinkSync(join(outside, 'secret.txt'), target);
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'failed', stopReason: 'escape_audit_failed' });
  expect(result.error).toContain(target);
  expect((await h.forkflow.status('mem-audit')).state).toBe('failed');
});

test('a memory directory that does not exist fails the fork before any model call', async () => {
  h.model.log.clear();
  const result = await h.forkflow.fork({ agentId: 'mem-missing', prompt: 'x\n@reply x', toolFilter: { kind: 'autoMem', memoryDir: join(ws, 'no-such-dir') } }, { mode: 'sync' });
  expect(result.status).toBe('failed');
  expect(result.error).toMatch(/memory directory .* cannot be used/);
  expect(h.model.log.entries()).toHaveLength(0);
});

test('a read-only agent cannot write, but may run read-only shell commands', async () => {
  const prompt = [
    'Look only.',
    tool('FileWrite', { file_path: join(ws, 'new.txt'), content: 'x' }),
    tool('Bash', { command: `touch ${join(ws, 'touched.txt')}` }),
    tool('Bash', { command: 'ls -la' }),
    '@reply looked',
  ].join('\n');
  const result = await h.forkflow.fork({ agentId: 'ro', prompt, toolFilter: 'readOnly' }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  const results = await toolResults('ro');
  expect(results.map((r) => r.isError)).toEqual([true, true, false]);
  expect(results[0]!.text).toContain('read-only');
  expect(existsSync(join(ws, 'new.txt'))).toBe(false);
  expect(existsSync(join(ws, 'touched.txt'))).toBe(false);
  expect(results[2]!.text).toContain('memory');
});
