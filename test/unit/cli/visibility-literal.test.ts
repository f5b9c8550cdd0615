/** Agent ids in visibility queries (src/client/tree.ts): a hostile id stays one string literal. */
import { visibilityLiteral } from '../../../src/client/tree';

test.each([
  ['plain', "'plain'"],
  ["it's", "'it\\'s'"],
  ['ends\\', "'ends\\\\'"],
  ["x\\' OR ForkName = 'y", "'x\\\\\\' OR ForkName = \\'y'"],
])('%j becomes %s', (id, literal) => {
  expect(visibilityLiteral(id)).toBe(literal);
});
