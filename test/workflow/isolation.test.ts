/**
 * Worktree isolation and workspace affinity as forks meet them: a worktree fork works in its
 * own git worktree (its opening says where), which is removed when unchanged and kept with
 * what changed otherwise — after the terminal state is recorded; a fork naming another
 * workspace's task queue runs its tools on the worker that owns that workspace.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { textOf } from '../../src/shared/messages-api/anthropic';
import { createModelClient } from '../../src/worker/model-client';
import { createWorkspaceWorker } from '../../src/worker/worker';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { recordHistory, startInputOf } from '../kit/histories';
import { agentStep, script, toolResultsIn, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

let h: Harness;
let repo: string;
beforeAll(async () => {
  repo = realpathSync(tempDir('repo'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# demo repo\n');
  git('add', '.');
  git('commit', '-q', '-m', 'init');
  h = await startHarness({ name: 'isolation', workspaceRoot: repo });
});
afterAll(() => h.close());

const E = temporal.api.enums.v1.EventType;

test('an unchanged worktree is removed; the opening told the fork where it works', async () => {
  const result = await h.forkflow.fork(
    { agentId: 'wt-clean', prompt: 'Only read.\n@tool Read {"file_path":"README.md"}\n@reply nothing to change', isolation: 'worktree' },
    { mode: 'sync' },
  );
  expect(result).toMatchObject({ status: 'completed', worktree: { kind: 'removed' } });
  const transcript = await h.forkflow.transcript('wt-clean');
  const opening = textOf(transcript[0]!);
  const worktreePath = join(repo, '.forkflow', 'worktrees', 'wt-clean');
  expect(opening).toContain(`your own git worktree at ${worktreePath}`);
  expect(opening).toContain(`parent's directory, ${repo}`);
  expect(JSON.stringify(transcript[2])).toContain('# demo repo'); // the Read ran in the worktree
  expect(existsSync(worktreePath)).toBe(false);
  expect(execFileSync('git', ['branch', '--list', 'forkflow/*'], { cwd: repo }).toString().trim()).toBe('');
});

test('a changed worktree is kept and reported, after the terminal state was recorded', async () => {
  const result = await h.forkflow.fork(
    { agentId: 'wt-dirty', prompt: 'Add a file.\n@tool FileWrite {"file_path":"NOTES.md","content":"from the fork\\n"}\n@reply added', isolation: 'worktree' },
    { mode: 'sync' },
  );
  const path = join(repo, '.forkflow', 'worktrees', 'wt-dirty');
  expect(result.worktree).toEqual({ kind: 'kept', path, branch: 'forkflow/wt-dirty', changedFiles: ['NOTES.md'], commits: 0 });
  expect(readFileSync(join(path, 'NOTES.md'), 'utf8')).toBe('from the fork\n');
  expect(existsSync(join(repo, 'NOTES.md'))).toBe(false);

  // The state was upserted as completed before the clean-up activity was even scheduled.
  const events = (await h.client.workflow.getHandle('wt-dirty').fetchHistory()).events ?? [];
  const completedAt = events.findIndex((e) => e.eventType === E.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES && JSON.stringify(e).includes(Buffer.from('"completed"').toString('base64')));
  const cleanupAt = events.findIndex((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'finishWorktree');
  expect(completedAt).toBeGreaterThan(0);
  expect(cleanupAt).toBeGreaterThan(completedAt);
  await recordHistory(h.client.workflow.getHandle('wt-dirty'), 'worktree-kept');
});

test('a fork naming another workspace queue runs its tools on that workspace’s worker', async () => {
  const other = realpathSync(tempDir('other-ws'));
  writeFileSync(join(other, 'only-here.txt'), 'found on the other machine\n');
  const taskQueue = uniqueTaskQueue('workspace-b');
  const connection = await NativeConnection.connect({ address: h.env.address });
  const worker = await createWorkspaceWorker({ connection, client: h.client, namespace: h.env.namespace, taskQueue, anthropic: createModelClient({ apiKey: 'k', baseURL: h.model.url }), workspaceRoot: other });
  try {
    const result = await worker.runUntil(
      h.forkflow.fork({ agentId: 'ws-b', prompt: 'Read it there.\n@tool Read {"file_path":"only-here.txt"}\n@reply read', workspace: { taskQueue } }, { mode: 'sync' }),
    );
    expect(result.status).toBe('completed');
    const transcript = await h.forkflow.transcript('ws-b');
    expect(JSON.stringify(transcript[2])).toContain('found on the other machine');
    const events = (await h.client.workflow.getHandle('ws-b').fetchHistory()).events ?? [];
    const toolTask = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool');
    expect(toolTask?.activityTaskScheduledEventAttributes?.taskQueue?.name).toBe(taskQueue);
  } finally {
    await connection.close();
  }
});

test("Agent calls: the call's isolation \"worktree\" and a definition's worktree each give the child its own worktree; a valid cwd moves where its tools run; cwd with a worktree is warned (S1-17, S1-35, S1-19, S1-20)", async () => {
  mkdirSync(join(repo, 'sub'), { recursive: true });
  writeFileSync(join(repo, 'sub', 'inner.txt'), 'only in sub\n');
  const isolated = { name: 'isolated', description: 'Works apart.', systemPrompt: 'You work in your own worktree.', sourceFile: 'isolated.md', isolation: 'worktree' as const };
  const writes = (file: string) => script('Write.', toolStep('FileWrite', { file_path: file, content: `${file} from the child\n` }), '@reply wrote');
  const prompt = script(
    'Delegate.',
    agentStep({ description: 'by call', subagent_type: 'general-purpose', isolation: 'worktree', prompt: writes('CALL.md') }),
    agentStep({ description: 'by definition', subagent_type: 'isolated', prompt: writes('DEF.md') }),
    agentStep({ description: 'in sub', subagent_type: 'general-purpose', cwd: 'sub', prompt: script('Read.', toolStep('Read', { file_path: 'inner.txt' }), '@reply read') }),
    agentStep({ description: 'both', subagent_type: 'general-purpose', cwd: 'sub', isolation: 'worktree', prompt: 'Nothing.\n@reply nothing' }),
    '@reply done',
  );
  const result = await h.forkflow.startAgent({ agentId: 'wt-calls', prompt, subAgents: { forkGate: false, agents: [isolated] } }).then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'done' });
  const [byCall, byDefinition, inSub, both] = toolResultsIn(await h.forkflow.transcript('wt-calls'));
  for (const [answer, file] of [[byCall!, 'CALL.md'], [byDefinition!, 'DEF.md']] as const) {
    expect(answer.json).toMatchObject({ status: 'completed', worktree: { path: expect.stringContaining(join(repo, '.forkflow', 'worktrees')) as string } });
    const path = (answer.json!.worktree as { path: string }).path;
    expect(readFileSync(join(path, file), 'utf8')).toBe(`${file} from the child\n`);
    expect(existsSync(join(repo, file))).toBe(false);
  }
  // The cwd child's Read of a relative path ran in repo/sub.
  expect(inSub!.json).toMatchObject({ status: 'completed', content: 'read' });
  expect(JSON.stringify(await h.forkflow.transcript('wt-calls.spawn-3'))).toContain('only in sub');
  expect(both!.json).toMatchObject({ status: 'completed', warning: expect.stringContaining('cwd and isolation "worktree" were both given') as string });
  expect(byCall!.json).not.toHaveProperty('warning');
});

test("the call's isolation overrides the definition's: worktree for a remote-only type runs here in a worktree, remote for a worktree type gets no worktree (S1-21)", async () => {
  const remoteOnly = { name: 'farm', description: 'Runs remotely.', systemPrompt: 'x', sourceFile: 'farm.md', isolation: 'remote' as const };
  const worktreeType = { name: 'apart', description: 'Works apart.', systemPrompt: 'x', sourceFile: 'apart.md', isolation: 'worktree' as const };
  // Nobody polls the remote queue: the remote child's start input is all there is to read.
  const remoteTaskQueue = uniqueTaskQueue('nobody-polls');
  const prompt = script(
    'Delegate.',
    agentStep({ description: 'here', subagent_type: 'farm', isolation: 'worktree', prompt: 'Here.\n@reply ran here' }),
    agentStep({ description: 'there', subagent_type: 'apart', isolation: 'remote', prompt: 'There.\n@reply never' }),
    '@reply waiting',
  );
  const root = await h.forkflow.startAgent({ agentId: 'wt-precedence', prompt, subAgents: { forkGate: false, agents: [remoteOnly, worktreeType], remoteTaskQueue } });
  const [here, there] = await waitFor(async () => {
    const results = toolResultsIn(await h.forkflow.transcript('wt-precedence'));
    return results.length === 2 ? results : undefined;
  }, 'both Agent calls answered');
  expect(here!.json).toMatchObject({ status: 'completed', agentId: 'wt-precedence.spawn-1', content: 'ran here' });
  expect(await startInputOf(h.client.workflow.getHandle('wt-precedence.spawn-1'))).toMatchObject({ isolation: 'worktree' });
  expect(there!.json).toMatchObject({ status: 'remote_launched', agentId: 'wt-precedence.spawn-2', taskQueue: remoteTaskQueue });
  const remote = await startInputOf(h.client.workflow.getHandle('wt-precedence.spawn-2'));
  expect(remote).not.toHaveProperty('isolation');
  expect(remote).toMatchObject({ workspace: { taskQueue: remoteTaskQueue } });
  await root.cancel();
});
