/** The fork worker rules an opening carries: the first rules unless it records seed 003's (version 2), also when rebuilt from its recipe. */
import { FORK_RULES_VERSION, directiveText, openingFromRecipe } from '../../../src/shared/prefix/fork-messages';
import { textOf } from '../../../src/shared/messages-api/anthropic';

describe('fork rules', () => {
  it("keeps the first rules for a recorded opening and states seed 003's for version 2", () => {
    const first = directiveText('Do it.');
    expect(first).toContain('4. Commit changes only if the directive asks for a commit.');
    expect(first).not.toContain('500 words');
    const seed = directiveText('Do it.', { rules: FORK_RULES_VERSION });
    expect(seed).toContain('4. If you modify files, commit your changes before reporting.');
    expect(seed).toContain('5. Keep your report under 500 words.');
    expect(seed.endsWith('</forkflow-worker>\nDo it.')).toBe(true);
  });

  it('rebuilds an opening from its recipe with the rules it was written with', () => {
    const shape = { count: 0, pendingToolUseIds: [] };
    const text = (rules?: typeof FORK_RULES_VERSION) => textOf(openingFromRecipe({ shape, directive: 'Go.', ...(rules ? { rules } : {}) })[0]!);
    expect(text()).toBe(directiveText('Go.'));
    expect(text(FORK_RULES_VERSION)).toBe(directiveText('Go.', { rules: FORK_RULES_VERSION }));
  });
});
