/**
 * Claude Code agent files written by hand (test/fixtures/claude-agents: every frontmatter
 * field seed 001 lists) through the real loader and the real `forkflow agents --dir`: it
 * reports exactly the fields forkflow cannot honour, by name, and keeps every other field.
 */
import path from 'node:path';
import { formatAgentReport, loadAgentDefinitions } from '../../../src/activities/agents';
import type { AgentDefinition, AgentLoadResult } from '../../../src/shared/agents/agents';
import { runForkflow } from '../../kit/processes';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'claude-agents');

let loaded: AgentLoadResult;
beforeAll(async () => {
  loaded = await loadAgentDefinitions(FIXTURES);
});
const agent = (name: string): AgentDefinition | undefined => loaded.agents.find((a) => a.name === name);

describe('Claude Code agent files', () => {
  it('reports exactly the fields forkflow cannot honour, each by file and name', () => {
    const reported = loaded.problems.map((p) => [path.basename(p.file), p.field, p.outcome]);
    expect(reported).toEqual([
      ['code-reviewer.md', 'model', 'unsupported'],
      // Claude Code's shell-command hooks are not forkflow's service hooks: a policy hook must not go missing, so the file is not loaded.
      ['guarded-deployer.md', 'hooks', 'skipped'],
      ['review-checklist.md', 'color', 'unsupported'],
      ['test-runner.md', 'skills', 'ignored'],
    ]);
    for (const p of loaded.problems) expect(p.problem).toContain(p.field === 'skills' ? 'lint-rules' : p.field);
  });

  it('keeps every field it honours, as written', () => {
    expect(loaded.agents.map((a) => a.name).sort()).toEqual(['cloud-builder', 'code-reviewer', 'json-style', 'personal-notes', 'release-notes', 'review-checklist', 'test-runner']);
    expect(agent('code-reviewer')).toMatchObject({ tools: ['Read', 'Grep', 'Glob'], permissionMode: 'acceptEdits', background: true, maxTurns: 8, memory: 'project' });
    // memory: user is kept: it lives in the home of the tree's tenant (src/shared/agents/agent-memory.ts).
    expect(agent('personal-notes')).toHaveProperty('memory', 'user');
    // A model alias is reported and kept: a tree's provider catalogue maps it (src/shared/providers/agent-provider.ts).
    expect(agent('code-reviewer')).toHaveProperty('model', 'sonnet');
    expect(agent('test-runner')).toMatchObject({
      tools: ['Read', 'Grep', 'Glob', 'Bash'],
      disallowedTools: ['Write'],
      model: 'inherit',
      permissionMode: 'plan',
      isolation: 'worktree',
      color: 'green',
      initialPrompt: 'Start by listing the test files you will run.',
      // A plugin-style name resolves by its suffix; the missing one is dropped (and reported above).
      skills: ['review-checklist', 'tools:release-notes'],
      mcpServers: { github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] } },
      requiredMcpServers: ['github'],
    });
    // effort is honoured: it reaches the agent's requests as output_config.effort.
    expect(agent('test-runner')).toHaveProperty('effort', 'high');
    // isolation: remote is honoured: its agent runs on the tree's remote workers (refused where a tree has none).
    expect(agent('cloud-builder')).toMatchObject({ color: 'purple', isolation: 'remote' });
    expect(agent('json-style')?.systemPrompt).toBe('You answer questions about the build system in one paragraph.');
    expect(agent('review-checklist')).toMatchObject({ context: 'fork', allowedTools: ['Read', 'Grep'] });
    expect(agent('review-checklist')).not.toHaveProperty('color');
  });

  it('`forkflow agents --dir` prints the same report, with colours, and fails while problems remain', async () => {
    const run = await runForkflow(['--json', 'agents', '--dir', FIXTURES]);
    const report = JSON.parse(run.stdout) as ReturnType<typeof formatAgentReport>;
    expect(report).toEqual(formatAgentReport(loaded));
    expect(report.rows.map((r) => [r[0], r[3]])).toEqual([
      ['cloud-builder', 'purple'],
      ['code-reviewer', '-'],
      ['json-style', '-'],
      ['personal-notes', '-'],
      ['release-notes', '-'],
      ['review-checklist', '-'],
      ['test-runner', 'green'],
    ]);
    expect(report.problems.filter((p) => p.includes('(not honoured)'))).toHaveLength(2);
    expect(report.summary).toBe('7 agents loaded, 4 problems (1 file skipped)');
    expect(run.status).not.toBe(0);
  });
});
