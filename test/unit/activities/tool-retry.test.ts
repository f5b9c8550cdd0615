/**
 * A lost worker is not a tool failure: each attempt of the tool activity decides what a
 * retry may do. Safe calls run again; a call that must not run twice, whose earlier attempt
 * had begun (its heartbeat says so), is not run again and says so; a real failure stops
 * after three attempts. Real tools on a temporary workspace, in the SDK's mock environment.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ConversationSource } from '../../../src/activities/conversation';
import { createToolActivities, rerunnable, TOOL_FAILURE_ATTEMPTS } from '../../../src/activities/run-tool';
import type { ToolCallInput, ToolCallResult } from '../../../src/shared/wire/activity-io';
import { tempDir } from '../../kit/env';

const workspace = { kind: 'workspace' } as const;
const none = { kind: 'none' } as const;

test('which calls may run again after an attempt that may have partly run', () => {
  expect(rerunnable('Read', none)).toBe(true);
  expect(rerunnable('Grep', none)).toBe(true);
  expect(rerunnable('Glob', none)).toBe(true);
  expect(rerunnable('FileWrite', workspace)).toBe(true);
  expect(rerunnable('Bash', none)).toBe(true);
  expect(rerunnable('Bash', { kind: 'within', dir: '/m' })).toBe(true);
  expect(rerunnable('Bash', workspace)).toBe(false);
  expect(rerunnable('FileEdit', workspace)).toBe(false);
});

/** `allowUnsandboxed`: a worker started to run Bash without the OS sandbox (the classifier decides for read-only calls). */
function setup(opts: { allowUnsandboxed?: boolean } = {}) {
  const root = tempDir('tool-retry');
  writeFileSync(join(root, 'a.txt'), 'one two\n');
  const activities = createToolActivities({ conversations: {} as ConversationSource, workspaceRoot: root, sandbox: () => Promise.resolve({ available: false, reason: 'test', ...(opts.allowUnsandboxed ? { allowUnsandboxed: true } : {}) }) as never });
  const call = (name: string, input: unknown, writePolicy: ToolCallInput['writePolicy'] = workspace): ToolCallInput => ({
    run: { workflowId: 'wf', runId: 'r' },
    agentId: 'a',
    turn: 1,
    toolUseId: 't1',
    name,
    input,
    workspaceRoot: root,
    writePolicy,
  });
  const run = (attempt: number, heartbeatDetails: unknown, input: ToolCallInput): Promise<ToolCallResult> =>
    new MockActivityEnvironment({ attempt, heartbeatDetails, heartbeatTimeoutMs: 2000 }).run((i: ToolCallInput) => activities.runTool(i), input);
  return { root, call, run };
}

const begun = { tool: 'FileEdit', runningSince: 1_000, at: 4_400 };

test('an edit whose earlier attempt had begun is not run again: the model is told, the file is untouched', async () => {
  const { root, call, run } = setup();
  const edit = call('FileEdit', { file_path: 'a.txt', old_string: 'one', new_string: 'ONE' });
  const out: ToolCallResult = await run(2, begun, edit);
  expect(out).toEqual({ isError: true, content: 'FileEdit was interrupted by a worker restart after 3.4 s; it may have partly run. It was not run again: check its effect before you run it again.' });
  expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one two\n');
});

test('an edit whose earlier attempt never began running (no heartbeat) runs on the retry', async () => {
  const { root, call, run } = setup();
  const out = await run(2, undefined, call('FileEdit', { file_path: 'a.txt', old_string: 'one', new_string: 'ONE' }));
  expect(out.isError).toBe(false);
  expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('ONE two\n');
});

test('a safe call runs again on a retry, whatever its earlier attempt did', async () => {
  const { call, run } = setup();
  const out = await run(5, { ...begun, tool: 'Read' }, call('Read', { file_path: 'a.txt' }, none));
  expect(out.isError).toBe(false);
  expect(out.content).toContain('one two');
});

test('a real failure is retried until the third attempt, then given up', async () => {
  // Input by reference to a message that is not there: the activity itself throws.
  const broken = { run: { workflowId: 'wf', runId: 'r' }, agentId: 'a', turn: 1, toolUseId: 'missing', name: 'Read', inputAt: { messageIndex: 0 }, writePolicy: none } as ToolCallInput;
  const activities = createToolActivities({ conversations: { messages: () => Promise.resolve([]) } as unknown as ConversationSource, workspaceRoot: '/', sandbox: () => Promise.resolve({ available: false, reason: 'test' }) as never });
  const attempt = (n: number) => new MockActivityEnvironment({ attempt: n }).run((i: ToolCallInput) => activities.runTool(i), broken);
  const early = await attempt(TOOL_FAILURE_ATTEMPTS - 1).catch((e: unknown) => e);
  expect(early).not.toBeInstanceOf(ApplicationFailure);
  const last = await attempt(TOOL_FAILURE_ATTEMPTS).catch((e: unknown) => e);
  expect(last).toBeInstanceOf(ApplicationFailure);
  expect(last).toMatchObject({ nonRetryable: true, type: 'ToolActivityError', message: expect.stringContaining('tool_use missing not found') as string });
});

test("a read-only agent's shell outside the sandbox: awk and tee withheld by default, allowed back per fork by shellPrograms (seed 000, S0-33)", async () => {
  const { call, run } = setup({ allowUnsandboxed: true });
  const awk = call('Bash', { command: "awk '{ print $2 }' a.txt | tee /dev/null" }, none);
  const withheld = await run(1, undefined, awk);
  expect(withheld).toMatchObject({ isError: true, content: expect.stringContaining('did not allow awk back: shellPrograms') as string });
  const allowed = await run(1, undefined, { ...awk, shellPrograms: ['awk', 'tee'] });
  expect(allowed).toMatchObject({ isError: false, content: 'two\n[exit code 0]' });
});
