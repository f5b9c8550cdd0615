/** `forkflow agents` data: table rows and problem lines from a real load. */
import path from 'node:path';
import { formatAgentReport, loadAgentDefinitions } from '../../../src/activities/agents';
import { agentFile, agentsDir, withBasics, type TempDir } from './kit';

let dir: TempDir;
beforeEach(() => {
  dir = agentsDir();
});
afterEach(() => dir.remove());

describe('formatAgentReport', () => {
  it('gives one row per agent sorted by name, and one line per problem', async () => {
    dir.file('1.md', withBasics('model: claude-opus-5\ntools: Read, Grep\nmaxTurns: -3', 'zeta'));
    dir.file('2.md', withBasics('disallowedTools: Bash', 'alpha'));
    dir.file('3.md', agentFile('name: audit\ndescription: Audit\ncontext: fork\nallowed-tools: Read'));
    dir.file('4.md', 'no frontmatter here');
    dir.file('5.md', agentFile('name: Bad Name\ndescription: x'));
    const report = formatAgentReport(await loadAgentDefinitions(dir.dir));

    expect(report.head).toEqual(['name', 'model', 'tools', 'color', 'source']);
    expect(report.rows).toEqual([
      ['alpha', 'inherit', 'all except Bash', '-', path.join(dir.dir, '2.md')],
      ['audit', 'caller (fork)', 'Read', '-', path.join(dir.dir, '3.md')],
      ['zeta', 'claude-opus-5', 'Read, Grep', '-', path.join(dir.dir, '1.md')],
    ]);
    expect(report.problems).toEqual([
      `${path.join(dir.dir, '1.md')}: maxTurns is -3; expected a whole number from 1 to 10000 (ignored). Use a whole number from 1 to 10000, or delete the line (then the default turn limit applies).`,
      expect.stringMatching(/^.*4\.md: the file does not start with a frontmatter block \(file skipped\)\. Begin the file/),
      expect.stringMatching(/^.*5\.md: name "Bad Name" is not valid: .* \(file skipped\)\. Set name: to "bad-name"/),
    ]);
    expect(report.summary).toBe('3 agents loaded, 3 problems (2 files skipped)');
  });

  it('counts a file once however many problems skipped it, and handles an empty result', async () => {
    dir.file('x.md', agentFile('color: red'));
    const report = formatAgentReport(await loadAgentDefinitions(dir.dir));
    expect(report.problems).toHaveLength(2);
    expect(report.summary).toBe('0 agents loaded, 2 problems (1 file skipped)');
    expect(formatAgentReport({ agents: [], problems: [] })).toEqual({ head: ['name', 'model', 'tools', 'color', 'source'], rows: [], problems: [], summary: '0 agents loaded, 0 problems' });
  });
});
