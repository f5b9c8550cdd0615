/**
 * Agent files with a service's tools: mcpServers (a map, or a list of caller names and
 * one-server maps), requiredMcpServers, hooks and routes are read; a bad mcpServers or routes
 * is left out (the agent has fewer tools), a bad hooks or requiredMcpServers skips the agent
 * (a policy must not silently go missing). What a named child then gets from its caller.
 */
import { agentMcpServers } from '../../../src/shared/tools/agent-access';
import { agentsDir, loadOne, withBasics, type TempDir } from './kit';

let dir: TempDir;
beforeEach(() => {
  dir = agentsDir();
});
afterEach(() => dir.remove());

test('mcpServers, requiredMcpServers, hooks and routes are read', async () => {
  const { agent, problems } = await loadOne(
    dir,
    withBasics(
      [
        'mcpServers:',
        '  - github',
        '  - docs:',
        '      type: http',
        '      url: https://docs.example/mcp',
        '      headers: { Authorization: "Bearer ${DOCS_TOKEN}" }',
        'requiredMcpServers: [docs]',
        'hooks:',
        '  PreToolUse:',
        '    - { taskQueue: policy, matcher: "crm_*", timeout: 5s }',
        'routes:',
        '  - { tools: [crm_*], taskQueue: crm-tools, readOnly: true }',
      ].join('\n'),
    ),
  );
  expect(problems).toEqual([]);
  expect(agent).toMatchObject({
    mcpServers: ['github', { docs: { type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } } }],
    requiredMcpServers: ['docs'],
    hooks: { PreToolUse: [{ taskQueue: 'policy', matcher: 'crm_*', timeout: '5s' }] },
    routes: [{ tools: ['crm_*'], taskQueue: 'crm-tools', readOnly: true, timeout: '60s', scheduleToStart: '30s' }],
  });
});

test('a bad mcpServers or routes is left out; a bad hooks or requiredMcpServers skips the agent', async () => {
  const ignored = await loadOne(dir, withBasics('mcpServers: { "bad__name": { command: x } }\nroutes: [{ tools: [a] }]'));
  expect(ignored.agent?.name).toBe('tester');
  expect(ignored.agent).not.toHaveProperty('mcpServers');
  expect(ignored.problems.map((p) => [p.field, p.outcome])).toEqual([
    ['mcpServers', 'ignored'],
    ['routes', 'ignored'],
  ]);
  expect(ignored.problems[1]!.problem).toContain('taskQueue');

  const skipped = await loadOne(dir, withBasics('hooks: { PreToolUse: [{ command: "./check.sh" }] }'));
  expect(skipped.agent).toBeUndefined();
  expect(skipped.problems).toEqual([expect.objectContaining({ field: 'hooks', outcome: 'skipped', fix: expect.stringContaining('not loaded') as string })]);
});

test('a named child keeps the caller servers its tool lists allow, adds its own, and may name the caller ones it keeps', () => {
  const caller = { github: { command: 'gh-mcp' }, jira: { type: 'http' as const, url: 'https://jira.example/mcp' } };
  expect(agentMcpServers({}, caller)).toEqual(caller);
  expect(agentMcpServers({ tools: ['Read', 'mcp__github__*'] }, caller)).toEqual({ github: caller.github });
  expect(agentMcpServers({ tools: ['Read'] }, caller)).toBeUndefined();
  expect(agentMcpServers({ disallowedTools: ['mcp__jira__*'] }, caller)).toEqual({ github: caller.github });
  expect(agentMcpServers({ tools: ['Read'], mcpServers: ['jira', { docs: { command: 'docs-mcp' } }] }, caller)).toEqual({ jira: caller.jira, docs: { command: 'docs-mcp' } });
});
