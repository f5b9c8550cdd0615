/** A host's own task queue (src/worker/config.ts): where the tools of its worktrees run. */
import { forkflowSettings, hostQueueOf } from '../../../src/worker/config';

test('a host id names the queue <queue>@<host>', () => {
  expect(hostQueueOf('forkflow', 'host-a')).toBe('forkflow@host-a');
  expect(hostQueueOf('q', 'web.01_b')).toBe('q@web.01_b');
  expect(forkflowSettings({ FORKFLOW_HOST_ID: 'h1' }).hostId).toBe('h1');
  expect(forkflowSettings({}).hostId).toBeUndefined();
});

test.each(['', '-a', 'a b', 'a@b', 'a/b', 'x'.repeat(64), 'é'])('host id %j is refused with a clear error', (id) => {
  expect(() => hostQueueOf('forkflow', id)).toThrow(/host id .* must be 1-63 letters/);
});
