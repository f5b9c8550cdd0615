/** Definitions from several directories (user, then project): a later directory wins by name; skills resolve across them. */
import path from 'node:path';
import { loadAgentSources } from '../../../src/activities/agents';
import { agentFile, agentsDir, withBasics, type TempDir } from './kit';

let user: TempDir;
let project: TempDir;
beforeEach(() => {
  user = agentsDir();
  project = agentsDir();
});
afterEach(() => {
  user.remove();
  project.remove();
});

describe('loadAgentSources', () => {
  it("lets a later directory's agent replace an earlier one's of the same name, and says so", async () => {
    user.file('reviewer.md', withBasics('maxTurns: 3', 'reviewer'));
    user.file('helper.md', withBasics('', 'helper'));
    project.file('reviewer.md', withBasics('maxTurns: 9', 'reviewer'));
    const loaded = await loadAgentSources([user.dir, project.dir]);
    expect(loaded.agents.map((a) => [a.name, a.maxTurns, a.sourceFile])).toEqual([
      ['helper', undefined, path.join(user.dir, 'helper.md')],
      ['reviewer', 9, path.join(project.dir, 'reviewer.md')],
    ]);
    expect(loaded.overridden).toEqual([`reviewer: ${path.join(project.dir, 'reviewer.md')} replaces ${path.join(user.dir, 'reviewer.md')}`]);
    expect(loaded.problems).toEqual([]);
    // The other order gives the other winner.
    expect((await loadAgentSources([project.dir, user.dir])).agents.find((a) => a.name === 'reviewer')?.maxTurns).toBe(3);
  });

  it('resolves skills against every directory, and reports the ones none supplies', async () => {
    user.file('lint.md', agentFile('name: lint\ndescription: Lints\ncontext: fork', 'Run the linter.'));
    project.file('dev.md', withBasics('skills: [lint, missing]', 'dev'));
    const loaded = await loadAgentSources([user.dir, project.dir]);
    expect(loaded.agents.find((a) => a.name === 'dev')?.skills).toEqual(['lint']);
    expect(loaded.problems.map((p) => [p.field, p.outcome])).toEqual([['skills', 'ignored']]);
    expect(loaded.problems[0]!.problem).toContain('"missing"');
  });
});
