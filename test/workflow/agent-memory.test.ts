/**
 * A named agent's persistent memory (seed 001, the definition's `memory`), on the dev server
 * with the offline model: the first run of `notes` finds its memory empty and writes its
 * index with the FileWrite tool its memory gives it; the next run of `notes`, in another
 * tree, starts with that index in its system prompt; `local` keeps it apart from `project`;
 * a link planted to lead the memory out of the workspace fails the agent by name, and
 * nothing is made outside; `user` lives in the home of the tree's tenant.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { textOf } from '../../src/shared/messages-api/anthropic';
import type { AgentDefinition } from '../../src/shared/agents/agents';
import { startHarness, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';
import { agentStep, script, toolResultsIn } from '../kit/tree';

let h: Harness;
let root: string;
/** The worker's FORKFLOW_USER_MEMORY_ROOT: the operator made homes for alice and carol. */
let homes: string;
beforeAll(async () => {
  homes = realpathSync(mkdtempSync(path.join(tmpdir(), 'forkflow-homes-')));
  for (const tenant of ['alice', 'carol']) mkdirSync(path.join(homes, tenant));
  h = await startHarness({ name: 'agent-memory', userMemoryRoot: homes });
  root = realpathSync(h.workspaceRoot);
});
afterAll(() => h.close());

const notes: AgentDefinition = { name: 'notes', description: 'Takes notes.', systemPrompt: 'You take notes on this codebase.', sourceFile: 'notes.md', memory: 'project', tools: ['Glob'] };
const reader: AgentDefinition = { name: 'reader', description: 'Reads.', systemPrompt: 'You read and remember.', sourceFile: 'reader.md', memory: 'project', tools: ['Read', 'Grep'], disallowedTools: ['FileEdit'] };
const scratch: AgentDefinition = { name: 'scratch', description: 'Keeps local notes.', systemPrompt: 'You keep local notes.', sourceFile: 'scratch.md', memory: 'local', tools: ['Glob'] };

/** The first request of the agent whose system prompt contains `marker`, after `skip` earlier ones. */
const requestsWith = (marker: string) => messageRequests(h.model).filter((e) => JSON.stringify(bodyOf(e).system ?? '').includes(marker));
const systemOf = (e: ReturnType<typeof requestsWith>[number]) => JSON.parse(JSON.stringify(bodyOf(e).system)) as unknown;
const systemText = (e: ReturnType<typeof requestsWith>[number]) => {
  const s = systemOf(e);
  return typeof s === 'string' ? s : (s as { text: string }[]).map((b) => b.text).join('\n');
};

test("the first run writes its memory's index; the next run, in another tree, starts with it in its system prompt", async () => {
  const index = path.join(root, '.claude/agent-memory/notes/MEMORY.md');
  const write = `@tool FileWrite ${JSON.stringify({ file_path: index, content: '- build: npm run build\n- the worker lives in src/worker\n' })}`;
  const first = script('Have notes look.', agentStep({ description: 'notes', subagent_type: 'notes', prompt: `Look at the build.\n${write}\n@reply noted` }), '@reply done');
  expect(await h.forkflow.startAgent({ agentId: 'mem-first', prompt: first, subAgents: { forkGate: false, agents: [notes] } }).then((a) => a.result())).toMatchObject({ status: 'completed', text: 'done' });
  expect(readFileSync(index, 'utf8')).toBe('- build: npm run build\n- the worker lives in src/worker\n');

  const firstRuns = requestsWith('You take notes on this codebase.');
  expect(firstRuns.length).toBeGreaterThanOrEqual(2);
  const opening = systemText(firstRuns[0]!);
  expect(opening).toMatch(/^You take notes on this codebase\.\n\n# Agent memory\n/);
  expect(opening).toContain(`${index} is the index`);
  expect(opening).toContain('MEMORY.md is empty: this is the first run');
  // Its definition names Glob only: its memory brings Read, FileWrite and FileEdit (its caller has them).
  expect(bodyOf(firstRuns[0]!).tools!.map((t) => t.name)).toEqual(['Glob', 'Read', 'FileEdit', 'FileWrite']);
  // The system prompt is the same on every request of the run (read once: the cache holds).
  for (const e of firstRuns) expect(systemOf(e)).toEqual(systemOf(firstRuns[0]!));
  // Teams are off: its prompt opens with its task, no <comms> block.
  expect(textOf(bodyOf(firstRuns[0]!).messages[0]!)).toMatch(/^Look at the build\./);

  const before = firstRuns.length;
  const second = script('Have notes look again.', agentStep({ description: 'notes', subagent_type: 'notes', prompt: 'Look again.\n@reply seen' }), '@reply done again');
  expect(await h.forkflow.startAgent({ agentId: 'mem-second', prompt: second, subAgents: { forkGate: false, agents: [notes] } }).then((a) => a.result())).toMatchObject({ status: 'completed', text: 'done again' });
  const later = requestsWith('You take notes on this codebase.').slice(before);
  expect(later.length).toBeGreaterThan(0);
  expect(systemText(later[0]!)).toContain('MEMORY.md as this run started:\n<agent-memory>\n- build: npm run build\n- the worker lives in src/worker\n</agent-memory>');
  // Its caller's own prompt has no memory.
  for (const e of requestsWith('Have notes look again.')) expect(systemText(e)).not.toContain('# Agent memory');
});

test("the memory tools stay within what the caller may use and what the definition denies", async () => {
  const prompt = script('Delegate.', agentStep({ description: 'read', subagent_type: 'reader', prompt: 'Read it.\n@reply read' }), '@reply done');
  // The caller may not use FileWrite itself; the definition denies FileEdit.
  const result = await h.forkflow.startAgent({ agentId: 'mem-tools', prompt, toolAccess: { mode: 'deny_list', tools: ['FileWrite'] }, subAgents: { forkGate: false, agents: [reader] } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  const [first] = requestsWith('You read and remember.');
  expect(bodyOf(first!).tools!.map((t) => t.name)).toEqual(['Read', 'Grep']);
  expect(systemText(first!)).toContain('# Agent memory');
});

test('local memory is kept apart from project memory; a link planted out of the workspace fails the agent, and nothing is made there', async () => {
  const ok = script('Scratch.', agentStep({ description: 'scratch', subagent_type: 'scratch', prompt: 'Scratch it.\n@reply scratched' }), '@reply ok');
  expect(await h.forkflow.startAgent({ agentId: 'mem-local', prompt: ok, subAgents: { forkGate: false, agents: [scratch] } }).then((a) => a.result())).toMatchObject({ status: 'completed' });
  expect(systemText(requestsWith('You keep local notes.')[0]!)).toContain(`${path.join(root, '.claude/agent-memory-local/scratch')} (scope local`);
  expect(readdirSync(path.join(root, '.claude/agent-memory-local'))).toEqual(['scratch']);

  // Another workspace under the served root, whose .claude leads elsewhere.
  const planted = path.join(root, 'planted');
  mkdirSync(planted);
  const outside = realpathSync(mkdtempSync(path.join(tmpdir(), 'forkflow-mem-outside-')));
  symlinkSync(outside, path.join(planted, '.claude'));
  const bad = script('Scratch there.', agentStep({ description: 'scratch', subagent_type: 'scratch', prompt: 'Scratch it.\n@reply never' }), '@reply saw the failure');
  const result = await h.forkflow.startAgent({ agentId: 'mem-planted', prompt: bad, workspace: { root: planted }, subAgents: { forkGate: false, agents: [scratch] } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'saw the failure' });
  const [answer] = toolResultsIn(await h.forkflow.transcript('mem-planted'));
  expect(answer!.text).toMatch(/AgentMemoryUnavailable|Could not open the agent's local memory/);
  expect(answer!.text).toContain('outside its workspace');
  expect(readdirSync(outside)).toEqual([]);
  expect(requestsWith('You keep local notes.').filter((e) => JSON.stringify(bodyOf(e).messages).includes('Scratch it.\\n@reply never'))).toEqual([]);
});

test("memory: user (S1-38) lives in the home the operator made for the tree's tenant: the first tree writes it, another tree of the same tenant starts with it, no other tenant sees it; no tenant, or no home, is refused by name", async () => {
  const personal: AgentDefinition = { name: 'personal', description: 'Remembers its user.', systemPrompt: 'You remember your user.', sourceFile: 'personal.md', memory: 'user', tools: ['Glob'] };
  const dir = path.join(homes, 'alice/.claude/agent-memory/personal');
  const index = path.join(dir, 'MEMORY.md');
  const write = `@tool FileWrite ${JSON.stringify({ file_path: index, content: '- prefers tabs\n' })}`;
  const read = `@tool Read ${JSON.stringify({ file_path: index })}`;
  const first = script('Ask personal.', agentStep({ description: 'personal', subagent_type: 'personal', prompt: `Learn.\n${write}\n${read}\n@reply learned` }), '@reply done');
  expect(await h.forkflow.startAgent({ agentId: 'mem-user-1', prompt: first, tenant: 'alice', subAgents: { forkGate: false, agents: [personal] } }).then((a) => a.result())).toMatchObject({ status: 'completed', text: 'done' });
  expect(readFileSync(index, 'utf8')).toBe('- prefers tabs\n');
  // Outside the workspace, and the child read it back with its own Read.
  expect(index.startsWith(root)).toBe(false);
  const childResults = toolResultsIn(await h.forkflow.transcript('mem-user-1.spawn-1'));
  expect(childResults.map((r) => r.isError)).toEqual([false, false]);
  expect(childResults[1]!.text).toContain('prefers tabs');
  const opening = systemText(requestsWith('You remember your user.')[0]!);
  expect(opening).toContain(`${index} is the index`);
  expect(opening).toContain('scope user: it is kept in your home');

  const before = requestsWith('You remember your user.').length;
  const again = script('Ask personal again.', agentStep({ description: 'personal', subagent_type: 'personal', prompt: 'Recall.\n@reply recalled' }), '@reply done again');
  expect(await h.forkflow.startAgent({ agentId: 'mem-user-2', prompt: again, tenant: 'alice', subAgents: { forkGate: false, agents: [personal] } }).then((a) => a.result())).toMatchObject({ status: 'completed' });
  expect(systemText(requestsWith('You remember your user.')[before]!)).toContain('<agent-memory>\n- prefers tabs\n</agent-memory>');

  // A tree without a tenant: refused by name at the launch. A tenant with no home: its start fails by name, nothing is made.
  const none = await h.forkflow.startAgent({ agentId: 'mem-user-none', prompt: again, subAgents: { forkGate: false, agents: [personal] } }).then((a) => a.result());
  expect(toolResultsIn(await h.forkflow.transcript('mem-user-none'))[0]).toMatchObject({ isError: true, text: expect.stringContaining('keeps memory: user, which lives in the home of this tree\'s tenant, and this tree names none') as string });
  expect(none.status).toBe('completed');
  const bob = await h.forkflow.startAgent({ agentId: 'mem-user-bob', prompt: again, tenant: 'bob', subAgents: { forkGate: false, agents: [personal] } }).then((a) => a.result());
  expect(bob.status).toBe('completed');
  const [bobAnswer] = toolResultsIn(await h.forkflow.transcript('mem-user-bob'));
  expect(bobAnswer).toMatchObject({ isError: true, json: { error: expect.stringContaining('There is no home for tenant "bob"') as string } });
  expect(readdirSync(homes).sort()).toEqual(['alice', 'carol']);
  expect(readdirSync(path.join(homes, 'carol'))).toEqual([]);
});
