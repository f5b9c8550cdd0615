/**
 * A call that does not fit its agent's budget share is not made (src/activities/model/budget-fit.ts):
 * it fails `TreeShareShort` with what it needs and wants, so the agent asks its root for more.
 * That is flow control, so the failure is BENIGN: the worker logs it at debug and counts no
 * activity error (as a plain failure it printed a warning with its stack for every short
 * share, and the demo's clean-output check failed on one).
 */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { withinBudget } from '../../../src/activities/model/budget-fit';
import type { MessagesRequest } from '../../../src/shared/messages-api/anthropic';
import type { ModelCallInput } from '../../../src/shared/wire/activity-io';
import { SHARE_SHORT_FAILURE } from '../../../src/shared/tree/tree-shares';

const body: MessagesRequest = { model: 'claude-sonnet-4-5', max_tokens: 1_000, messages: [{ role: 'user', content: 'Go on.' }] };
const input = (share: { tokens: number; final?: true }) => ({ agentId: 'a', turn: 3, budget: { left: 100_000, share } }) as unknown as ModelCallInput;

test('a call past its share fails TreeShareShort, BENIGN, with its need and want', async () => {
  const err = await withinBudget({}, input({ tokens: 50 }), body).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  const failure = err as ApplicationFailure;
  expect(failure.type).toBe(SHARE_SHORT_FAILURE);
  expect(failure.category).toBe(ApplicationFailureCategory.BENIGN);
  expect(failure.nonRetryable).toBe(true);
  const [{ need, want }] = failure.details as [{ need: number; want: number }];
  expect(want - need).toBe(body.max_tokens - 1);
});

test('a call that fits its share is made, max_tokens within the share', async () => {
  const fitted = await withinBudget({}, input({ tokens: 600, final: true }), body);
  expect(fitted.max_tokens).toBeGreaterThan(0);
  expect(fitted.max_tokens).toBeLessThan(600);
});
