/**
 * The generated reference (docs/reference/) is what the generator prints from the source of
 * truth today: a change to a zod schema's fields or descriptions, the environment table, a
 * command's help, a signal, a failure type or an exported API's TSDoc without `npm run docs`
 * fails here, naming the file.
 */
import { apiPages, differences, referencePages, REFERENCE_DIR } from '../../../scripts/docs/generate';
import { fieldRows } from '../../../scripts/docs/reference/fork-input';

/** Fails with every difference and what to do about it. */
function expectCurrent(problems: string[]): void {
  if (problems.length) throw new Error(`${problems.join('\n')}\nThe generated reference is out of date: run \`npm run docs\` and commit what it writes.`);
}

test('the reference pages and JSON Schemas are what the generator prints', () => {
  const pages = referencePages();
  expect([...pages.keys()]).toEqual(expect.arrayContaining([`${REFERENCE_DIR}/fork-input.md`, `${REFERENCE_DIR}/settings.md`, `${REFERENCE_DIR}/cli.md`, `${REFERENCE_DIR}/errors.md`, `${REFERENCE_DIR}/messages.md`, `${REFERENCE_DIR}/contracts.md`]));
  expectCurrent(differences(pages));
});

test('the API reference is what TypeDoc prints from the TSDoc of the five entry points', () => {
  const pages = apiPages();
  expect([...pages.keys()].sort()).toEqual([`${REFERENCE_DIR}/api/README.md`, `${REFERENCE_DIR}/api/forkflow.md`, ...['activities', 'testing', 'worker', 'workflows'].map((m) => `${REFERENCE_DIR}/api/forkflow/${m}.md`)].sort());
  expectCurrent(differences(pages));
});

test('a changed, missing or left-over page is reported', () => {
  const pages = referencePages();
  const [first] = pages.keys();
  const changed = new Map(pages).set(first!, 'not what is checked in\n');
  expect(differences(changed)).toEqual([`${first!} differs from what the generator prints`]);
  const extra = new Map(pages).set(`${REFERENCE_DIR}/no-such-page.md`, 'x');
  expect(differences(extra)).toEqual([`${REFERENCE_DIR}/no-such-page.md is missing`]);
  const fewer = new Map([...pages].filter(([p]) => p !== first));
  expect(differences(fewer)).toEqual([`${first!} is not generated any more`]);
});

test('a fork-input field without a description stops the generator', () => {
  expect(() => fieldRows({ type: 'object', properties: { shiny: { type: 'string' } } }, '')).toThrow(/shiny has no description: add \.describe/);
});
