/** Branch and directory names from agent ids: deterministic, valid refs, distinct for distinct ids. */
import { branchNameFor, isWorktreeError } from '../../../src/activities/worktree';
import { safeAgentId } from '../../../src/activities/worktree/names';
import { gitStatusCode, testRepo, type TestRepo } from './kit';

let repo: TestRepo;
beforeAll(() => {
  repo = testRepo();
});
afterAll(() => repo.remove());

const hostile = [
  '../x',
  '..',
  '.',
  '/abs/path',
  'a/../../b',
  'with spaces in it',
  ' leading and trailing ',
  '~^:?*[',
  'back\\slash',
  'x.lock',
  'ends.with.dot.',
  '@',
  'a@{1}',
  '-starts-with-dash',
  '--force',
  'new\nline\ttab',
  'nul\u0000byte',
  'caf\u00e9',
  'cafe\u0301', // the same word, decomposed
  '\u5206\u5c94\u4ee3\u7406',
  '\ud83e\udd16 robot',
  'A'.repeat(500),
  'A'.repeat(499) + 'B',
  'Fork-ABC',
  'fork-abc.', // upper/lower and dots must not meet a plain id
];

describe('branchNameFor', () => {
  it('keeps short, plain, lower-case ids as they are', () => {
    expect(branchNameFor('fork-review-1a2b3c4d')).toBe('forkflow/fork-review-1a2b3c4d');
    expect(branchNameFor('agent_7')).toBe('forkflow/agent_7');
  });

  it.each(hostile.map((id) => [JSON.stringify(id), id]))('gives a valid branch for %s', (_label, id) => {
    const branch = branchNameFor(id);
    expect(gitStatusCode(repo.root, 'check-ref-format', '--branch', branch)).toBe(0);
    expect(branch).toMatch(/^forkflow\/[a-z0-9][a-z0-9_.-]*$/);
    expect(branch.length).toBeLessThanOrEqual('forkflow/'.length + 64);
    expect(branchNameFor(id)).toBe(branch);
  });

  it('gives distinct branches for distinct ids, including ones that slug the same', () => {
    const ids = [...hostile, 'x', 'X', 'x-', 'fork-abc', 'fork abc', 'fork_abc', 'fork/abc', 'Caf\u00e9', 'cafe', 'A'.repeat(64).toLowerCase(), 'a'.repeat(65)];
    const branches = ids.map(branchNameFor);
    expect(new Set(branches).size).toBe(ids.length);
  });

  it('keeps a readable part of mangled ids', () => {
    expect(safeAgentId('../x')).toMatch(/^x\.[0-9a-f]{12}$/);
    expect(safeAgentId('Fix the Bug!')).toMatch(/^fix-the-bug\.[0-9a-f]{12}$/);
    expect(safeAgentId('caf\u00e9')).toMatch(/^cafe\.[0-9a-f]{12}$/);
    expect(safeAgentId('\u5206\u5c94')).toMatch(/^agent\.[0-9a-f]{12}$/);
  });

  it.each([[''], [undefined], [42], [null]])('rejects %p as an agent id with the named error', (id) => {
    let caught: unknown;
    try {
      branchNameFor(id as string);
    } catch (err) {
      caught = err;
    }
    expect(isWorktreeError(caught, 'invalid-agent-id')).toBe(true);
    expect((caught as Error).name).toBe('WorktreeError');
  });
});
