/**
 * A fork answers from its first moment: its handlers are registered before its first await,
 * so a status query and a message that arrive while its worktree is still being created are
 * served and queued. The worktree creation is held open by the test (the activity waits on a
 * gate the test releases), so "while" is a fact the test controls, not a race.
 */
import { execFileSync } from 'node:child_process';
import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createIsolationActivities } from '../../src/activities/isolation';
import type { WorktreeRef } from '../../src/shared/wire/activity-io';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';

let h: Harness;
let repo: string;
beforeAll(async () => {
  repo = realpathSync(tempDir('repo'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# demo repo\n');
  git('add', '.');
  git('commit', '-q', '-m', 'init');
  h = await startHarness({ name: 'handlers-first', workspaceRoot: repo });
});
afterAll(() => h.close());

/** A promise with its resolver outside: the test opens it when it has seen what it wants. */
function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

test('status and messages are served while the worktree is being created', async () => {
  const real = createIsolationActivities({ workspaceRoot: repo });
  const entered = gate();
  const release = gate();
  const taskQueue = uniqueTaskQueue('slow-worktree');
  const connection = await NativeConnection.connect({ address: h.env.address });
  const worker = await Worker.create({
    connection,
    namespace: h.env.namespace,
    taskQueue,
    activities: {
      ...real,
      async createWorktree(input: { repoRoot?: string; agentId: string }): Promise<WorktreeRef> {
        entered.open();
        await release.promise;
        return real.createWorktree(input);
      },
    },
  });
  try {
    await worker.runUntil(async () => {
      const handle = await h.forkflow.fork(
        { agentId: 'slow-worktree', prompt: 'Start.\n@reply first', isolation: 'worktree', workspace: { root: repo, taskQueue } },
        { mode: 'forget' },
      );
      await entered.promise; // the workflow is now inside its first await

      const early = await handle.status();
      expect(early).toMatchObject({ agentId: 'slow-worktree', state: 'running', activity: 'creating worktree', turns: 0, messages: 0, pendingMessages: 0 });
      expect(early.model).toBeTruthy();
      await handle.sendMessage({ message: '@reply second', summary: 'sent during set-up', from: 'operator' });
      expect((await handle.status()).pendingMessages).toBe(1);
      expect(messageRequests(h.model)).toHaveLength(0); // no model call before the worktree exists

      release.open();
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'completed', text: 'second', turns: 2, worktree: { kind: 'removed' } });
      // The message queued during set-up entered at the first turn boundary, after the first reply.
      const second = bodyOf(messageRequests(h.model)[1]!).messages;
      expect(JSON.stringify(second[second.length - 1])).toContain('sent during set-up');
    });
  } finally {
    await connection.close();
  }
});
