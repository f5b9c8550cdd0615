/** The pure helpers: model precedence, tool access policies and an agent's tool set. */
import { resolveAgentModel, summarizeAgentTools } from '../../../src/shared/agents/agents';
import { agentToolsFor, applyToolAccess, parseToolAccessPolicy, type ToolAccessPolicy } from '../../../src/shared/tools/agent-access';

describe('resolveAgentModel', () => {
  const parentModel = 'parent-model';
  it.each([
    ['the call wins over the definition', { callModel: 'call-model', definition: { model: 'def-model' } }, 'call-model'],
    ['the definition is used when the call names none', { definition: { model: 'def-model' } }, 'def-model'],
    ['the parent is used when neither names one', { definition: {} }, parentModel],
    ['the parent is used without a definition', {}, parentModel],
    ['inherit in the definition means the parent', { definition: { model: 'inherit' } }, parentModel],
    ['inherit in the call means the parent, even over the definition', { callModel: 'inherit', definition: { model: 'def-model' } }, parentModel],
    ['a blank call model is no model', { callModel: '  ', definition: { model: 'def-model' } }, 'def-model'],
  ])('%s', (_label, args, expected) => {
    expect(resolveAgentModel({ ...args, parentModel })).toBe(expected);
  });
});

describe('parseToolAccessPolicy', () => {
  const policies: ToolAccessPolicy[] = [
    { mode: 'inherit' },
    { mode: 'allow_list', tools: ['Read', 'Grep'] },
    { mode: 'deny_list', tools: ['Bash', 'mcp__github__*'] },
  ];

  it.each(policies)('accepts %j as an object and as a JSON string', (policy) => {
    expect(parseToolAccessPolicy(policy)).toEqual({ ok: true, policy });
    expect(parseToolAccessPolicy(JSON.stringify(policy))).toEqual({ ok: true, policy });
  });

  it('treats an absent policy as inherit', () => {
    expect(parseToolAccessPolicy(undefined)).toEqual({ ok: true, policy: { mode: 'inherit' } });
    expect(parseToolAccessPolicy(null)).toEqual({ ok: true, policy: { mode: 'inherit' } });
  });

  it('returns an error, not a throw, for a string that is not JSON', () => {
    expect(parseToolAccessPolicy('allow Read and Grep please')).toEqual({
      ok: false,
      error:
        'The tool access policy is a string but not valid JSON ("allow Read and Grep please"). Send {"mode":"inherit"}, ' +
        '{"mode":"allow_list","tools":["Read","Grep"]} or {"mode":"deny_list","tools":["Bash"]}.',
    });
  });

  it.each([
    ['an unknown mode', { mode: 'allow' }, 'mode: must be one of "inherit", "allow_list", "deny_list"'],
    ['a list without tools', '{"mode":"allow_list"}', 'tools: is missing'],
    ['a tool that is not a name', { mode: 'deny_list', tools: ['Bash', 7] }, 'tools[1]:'],
    ['tools on inherit', { mode: 'inherit', tools: ['Read'] }, 'tools'],
    ['a bare JSON array', '["Read"]', 'policy: must be an object'],
    ['a number', 3, 'policy: must be an object'],
  ])('explains %s', (_label, value, fragment) => {
    const result = parseToolAccessPolicy(value);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toContain(fragment);
      expect(result.error).toContain('{"mode":"allow_list","tools":["Read","Grep"]}');
    }
  });
});

describe('applyToolAccess', () => {
  const available = ['Read', 'Grep', 'Bash', 'mcp__github__issue', 'mcp__slack__post'];

  it('inherit returns every available tool, as a new array', () => {
    const out = applyToolAccess({ mode: 'inherit' }, available);
    expect(out).toEqual(available);
    expect(out).not.toBe(available);
  });

  it('allow_list keeps listed tools in the order they were available, ignoring unknown names', () => {
    expect(applyToolAccess({ mode: 'allow_list', tools: ['Bash', 'Read', 'Teleport'] }, available)).toEqual(['Read', 'Bash']);
    expect(applyToolAccess({ mode: 'allow_list', tools: [] }, available)).toEqual([]);
  });

  it('deny_list removes listed tools', () => {
    expect(applyToolAccess({ mode: 'deny_list', tools: ['Bash', 'Teleport'] }, available)).toEqual(['Read', 'Grep', 'mcp__github__issue', 'mcp__slack__post']);
  });

  it('understands * and prefix wildcards in both lists', () => {
    expect(applyToolAccess({ mode: 'allow_list', tools: ['mcp__github__*'] }, available)).toEqual(['mcp__github__issue']);
    expect(applyToolAccess({ mode: 'deny_list', tools: ['mcp__*'] }, available)).toEqual(['Read', 'Grep', 'Bash']);
    expect(applyToolAccess({ mode: 'allow_list', tools: ['*'] }, available)).toEqual(available);
    expect(applyToolAccess({ mode: 'deny_list', tools: ['*'] }, available)).toEqual([]);
  });

  it('matches names exactly, case included', () => {
    expect(applyToolAccess({ mode: 'allow_list', tools: ['read', 'Gre'] }, available)).toEqual([]);
  });
});

describe('agentToolsFor and summarizeAgentTools', () => {
  const parent = ['Read', 'Grep', 'Glob', 'Bash', 'Write', 'Agent'];

  it.each([
    ['no tool fields: the parent tools', {}, parent, 'all'],
    ['tools narrows, in parent order', { tools: ['Bash', 'Read'] }, ['Read', 'Bash'], 'Bash, Read'],
    ['disallowedTools removes', { disallowedTools: ['Bash', 'Write'] }, ['Read', 'Grep', 'Glob', 'Agent'], 'all except Bash, Write'],
    ['both: allow, then deny', { tools: ['Read', 'Bash'], disallowedTools: ['Bash'] }, ['Read'], 'Read, Bash (denied: Bash)'],
    ['allowed-tools narrows too', { allowedTools: ['Glob', 'Grep'] }, ['Grep', 'Glob'], 'Glob, Grep'],
    ['tools and allowed-tools intersect', { tools: ['Read', 'Grep'], allowedTools: ['Grep', 'Glob'] }, ['Grep'], 'Read, Grep (within allowed-tools: Grep, Glob)'],
    ['an empty allow list gives none', { tools: [] }, [], 'none'],
  ])('%s', (_label, definition, tools, summary) => {
    expect(agentToolsFor(definition, parent)).toEqual(tools);
    expect(summarizeAgentTools(definition)).toBe(summary);
  });
});
