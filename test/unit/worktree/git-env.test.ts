/** The sanitised git environment and the per-repository lock, without touching a repository. */
import { gitEnv } from '../../../src/activities/worktree/git';
import { lockedRepoCount, withRepoLock } from '../../../src/activities/worktree/repo-lock';

describe('gitEnv', () => {
  it('keeps none of the caller\'s GIT_* variables or secrets, and sets ours', () => {
    const env = gitEnv({ PATH: '/bin:bin:', HOME: '/home/u', GIT_DIR: '/x/.git', GIT_WORK_TREE: '/x', git_index_file: 'i', GIT_CONFIG_PARAMETERS: "'core.bare'='true'", PAGER: 'less', ANTHROPIC_API_KEY: 'sk-ant-x', OPENAI_API_KEY: 'sk-x', AWS_SECRET_ACCESS_KEY: 'x', FORKFLOW_CODEC_TOKEN: 't' });
    expect(env).toEqual({
      // A relative PATH entry would let a file in the repository stand in for a program.
      PATH: '/bin',
      HOME: '/home/u',
      GIT_TERMINAL_PROMPT: '0',
      GIT_PAGER: 'cat',
      PAGER: 'cat',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_OPTIONAL_LOCKS: '0',
      LC_ALL: 'C',
      // Nothing the repository's config names runs in the worker's own git.
      GIT_CONFIG_COUNT: '9',
      GIT_CONFIG_KEY_0: 'core.hooksPath',
      GIT_CONFIG_VALUE_0: '/dev/null',
      GIT_CONFIG_KEY_1: 'core.fsmonitor',
      GIT_CONFIG_VALUE_1: 'false',
      GIT_CONFIG_KEY_2: 'core.sshCommand',
      GIT_CONFIG_VALUE_2: 'false',
      GIT_CONFIG_KEY_3: 'core.pager',
      GIT_CONFIG_VALUE_3: 'cat',
      GIT_CONFIG_KEY_4: 'credential.helper',
      GIT_CONFIG_VALUE_4: '',
      GIT_CONFIG_KEY_5: 'protocol.allow',
      GIT_CONFIG_VALUE_5: 'never',
      GIT_CONFIG_KEY_6: 'submodule.recurse',
      GIT_CONFIG_VALUE_6: 'false',
      GIT_CONFIG_KEY_7: 'gc.auto',
      GIT_CONFIG_VALUE_7: '0',
      GIT_CONFIG_KEY_8: 'maintenance.auto',
      GIT_CONFIG_VALUE_8: 'false',
    });
  });

  it('inside the sandbox: a private HOME, no global config, and the repository trusted whoever owns it', () => {
    const env = gitEnv({ PATH: '/usr/bin', HOME: '/home/u' }, true);
    expect(env).toMatchObject({ HOME: '/tmp/home', TMPDIR: '/tmp', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_COUNT: '10', GIT_CONFIG_KEY_9: 'safe.directory', GIT_CONFIG_VALUE_9: '*' });
  });
});

/** A promise and its resolver, to hold a locked section open as long as a test needs. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Lets every pending callback run (a turn of the event loop, not a timed sleep). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('withRepoLock', () => {
  it('runs calls for one repository one at a time, in order, and others alongside', async () => {
    const events: string[] = [];
    const a = gate();
    const first = withRepoLock('/repo', async () => {
      events.push('a start');
      await a.promise;
      events.push('a end');
    });
    const second = withRepoLock('/repo', () => {
      events.push('b start');
      return Promise.resolve('b');
    });
    const elsewhere = withRepoLock('/other', () => {
      events.push('other start');
      return Promise.resolve();
    });
    await settle();
    await elsewhere;
    expect(events).toEqual(['a start', 'other start']);
    a.open();
    await first;
    expect(await second).toBe('b');
    expect(events).toEqual(['a start', 'other start', 'a end', 'b start']);
    expect(lockedRepoCount()).toBe(0);
  });

  it('releases the lock when a call fails', async () => {
    const failed = withRepoLock('/repo', () => Promise.reject(new Error('boom')));
    const next = withRepoLock('/repo', () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ran');
    expect(lockedRepoCount()).toBe(0);
  });
});
