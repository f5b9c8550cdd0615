/**
 * The failure module is the one place failure types and their details are built and read:
 * what one side builds, the other side reads back, and nothing else is mistaken for it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE, failure, forkFailed, forkResultOf, invalid, isFailure, issuesOf } from '../../../src/shared/wire/failures';
import type { ForkResult } from '../../../src/shared/wire/status';

const result = { agentId: 'a', status: 'failed', text: 'partial', error: 'provider said no', turns: 2 } as unknown as ForkResult;

test('a ForkFailed carries its result, non-retryable, with the error as its message', () => {
  const f = forkFailed(result);
  expect(f).toMatchObject({ type: 'ForkFailed', message: 'provider said no', nonRetryable: true });
  expect(forkResultOf(f)).toEqual(result);
});

test('only a ForkFailed yields a result', () => {
  expect(forkResultOf(failure(FAILURE.approvalTimedOut, 'late', result))).toBeUndefined();
  expect(forkResultOf(new Error('ForkFailed'))).toBeUndefined();
  expect(forkResultOf(ApplicationFailure.create({ type: 'ForkFailed', message: 'no details' }))).toBeUndefined();
});

test('invalid(...) carries its issues; a failure without them reads as its message', () => {
  const f = invalid(FAILURE.invalidForkInput, 'Invalid forkWorkflow input', ['prompt: required', 'maxTurns: too big']);
  expect(f.message).toBe('Invalid forkWorkflow input: prompt: required; maxTurns: too big');
  expect(isFailure(f, FAILURE.invalidForkInput)).toBe(true);
  expect(isFailure(f, FAILURE.invalidSnapshot)).toBe(false);
  expect(issuesOf(f)).toEqual(['prompt: required', 'maxTurns: too big']);
  expect(issuesOf(failure(FAILURE.invalidDreamConfig, 'stateDir inside memoryDir'))).toEqual(['stateDir inside memoryDir']);
});

test('type names are wire values and stay as recorded in histories', () => {
  expect(FAILURE).toMatchObject({ forkFailed: 'ForkFailed', invalidForkInput: 'InvalidForkInput', cacheUnsafeOverride: 'CacheUnsafeOverride', worktreeUnavailable: 'WorktreeUnavailable', approvalTimedOut: 'ApprovalTimedOut', invalidSnapshot: 'InvalidSnapshot', invalidDreamConfig: 'InvalidDreamConfig' });
});
