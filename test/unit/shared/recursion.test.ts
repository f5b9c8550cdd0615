/** The recursion guard catches a fork child by its query source, by its boilerplate, or both. */
import { FORK_QUERY_SOURCE } from '../../../src/shared/wire/constants';
import { buildForkOpening } from '../../../src/shared/prefix/fork-messages';
import { forkRecursionGuard } from '../../../src/shared/prefix/recursion';

const forkMessages = buildForkOpening([{ role: 'user', content: 'parent says hi' }, { role: 'assistant', content: 'ok' }], 'do part one').messages;
const plainMessages = [{ role: 'user' as const, content: 'Survey the repo.' }];

test('a child with the fork query source is refused, even without boilerplate', () => {
  const verdict = forkRecursionGuard({ querySource: FORK_QUERY_SOURCE, messages: plainMessages });
  expect(verdict).toMatchObject({ allowed: false, detectedBy: 'query_source' });
});

test('a child with the boilerplate in its messages is refused, even under another query source', () => {
  const verdict = forkRecursionGuard({ querySource: 'agent:custom', messages: forkMessages });
  expect(verdict).toMatchObject({ allowed: false, detectedBy: 'boilerplate' });
  expect(verdict.allowed || verdict.message).toContain('yourself');
});

test('a top-level agent without either may fork', () => {
  expect(forkRecursionGuard({ querySource: 'sdk', messages: plainMessages })).toEqual({ allowed: true });
});

test('the word in plain text is not the tag: quoting it does not trip the guard', () => {
  const messages = [{ role: 'user' as const, content: 'What does forkflow-worker mean in the logs?' }];
  expect(forkRecursionGuard({ querySource: 'sdk', messages })).toEqual({ allowed: true });
});
