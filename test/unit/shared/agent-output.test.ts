import { AGENT_OUTPUT_LIMITS, AGENT_OUTPUT_ROOT, agentOutputFile, isAgentOutputPath, renderAgentOutput } from '../../../src/shared/tree/agent-output';

describe('sub-agent output files', () => {
  test('a path per agent id, encoded, under the output root', () => {
    expect(agentOutputFile('lead.worker-1')).toBe(`${AGENT_OUTPUT_ROOT}/lead.worker-1.output`);
    expect(agentOutputFile('a/../b c')).toBe(`${AGENT_OUTPUT_ROOT}/a%2F..%2Fb%20c.output`);
  });

  test('every spelling of a path under the root is recognised; others are not', () => {
    for (const p of [agentOutputFile('x'), `/${AGENT_OUTPUT_ROOT}//x.output`, `/tmp/..${AGENT_OUTPUT_ROOT}/x`, `/./${AGENT_OUTPUT_ROOT.slice(1)}/./y`, AGENT_OUTPUT_ROOT]) {
      expect(isAgentOutputPath(p)).toBe(true);
    }
    for (const p of [`${AGENT_OUTPUT_ROOT}-not/x`, `relative${AGENT_OUTPUT_ROOT}/x`, `.${AGENT_OUTPUT_ROOT}/x`, '/tmp/x.output', `/tmp${AGENT_OUTPUT_ROOT}/x`]) {
      expect(isAgentOutputPath(p)).toBe(false);
    }
  });

  const header = { agentId: 'lead.w-1', state: 'running', turns: 2, toolUses: 1, totalTokens: 30, doing: 'tool Bash' };

  test('the rendering: a head line, then the messages, tool calls and results shown, thinking left out', () => {
    const text = renderAgentOutput(header, [
      { role: 'user', content: 'Do it.' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'secret plan', signature: 's' }, { type: 'text', text: 'On it.' }, { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a.txt' }], is_error: true }] },
    ], 3);
    expect(text).toBe(
      'Agent lead.w-1: running; turns 2; tool uses 1; tokens 30; now: tool Bash\n' +
        '[… 3 earlier messages not shown]\n--- user\nDo it.\n--- assistant\nOn it.\n[tool_use Bash] {"command":"ls"}\n--- user\n[tool_result error] a.txt\n',
    );
  });

  test('a long output keeps its end; a long block is clipped', () => {
    const long = 'x'.repeat(AGENT_OUTPUT_LIMITS.blockChars * 2);
    const messages = Array.from({ length: 40 }, (_, i) => ({ role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: `t${i}`, content: `${i}:${long}` }] }));
    const text = renderAgentOutput({ ...header, state: 'completed' }, messages);
    expect(text.length).toBeLessThan(AGENT_OUTPUT_LIMITS.shownChars + 200);
    expect(text).toMatch(/^Agent lead\.w-1: completed;[^\n]*\n\[… \d+ characters before this\]/);
    expect(text).toContain('[tool_result] 39:xxx');
    expect(text).not.toContain('[tool_result] 0:');
  });
});
