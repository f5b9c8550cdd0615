/**
 * Agent definitions given inline (`subAgents.agents` of a start input): a field forkflow
 * cannot honour refuses the start by name, where a tree starts (never a run continuing or a
 * sub-agent inheriting it); effort and colour are taken. And a colour's way to the screens:
 * the start memo, read back from a listing, shown by `forkflow top` and `watch --tree`.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { inlineDefinitionProblems } from '../../../src/shared/agents/agent-honoured';
import type { AgentDefinition } from '../../../src/shared/agents/agents';
import { colorOfMemo, COLOR_MEMO_KEY } from '../../../src/shared/agents/agent-color';
import { forkInputSchema } from '../../../src/shared/wire/fork-input';
import { describeIssues } from '../../../src/shared/wire/fork-input-validation';
import { startMemo, toAgentRow } from '../../../src/client/rows';
import { renderTop } from '../../../src/cli/top/render';
import { treeLines } from '../../../src/cli/watch/render';

const base: AgentDefinition = { name: 'reviewer', description: 'Reviews.', systemPrompt: 'You review.', sourceFile: 'inline' };
const start = (agents: AgentDefinition[], extra: Record<string, unknown> = {}) => forkInputSchema.safeParse({ prompt: 'Go.', subAgents: { agents }, ...extra });

describe('inline definitions', () => {
  it('take memory: user, isolation: remote and a model alias, honoured where the tree can (a tenant, remote workers, Anthropic or a catalogue), as a loaded file\'s are', () => {
    expect(start([{ ...base, memory: 'user' }, { ...base, name: 'remote', isolation: 'remote', model: 'sonnet' }]).success).toBe(true);
    expect(inlineDefinitionProblems({ ...base, memory: 'user' })).toEqual([]);
  });

  it('refuse a context: fork definition carrying what a fork of its caller cannot use', () => {
    const skill: AgentDefinition = { ...base, name: 'audit', context: 'fork', allowedTools: ['Read'], model: 'claude-opus-4-8', tools: ['Bash'], effort: 'high' };
    expect(inlineDefinitionProblems(skill).map((p) => p.field)).toEqual(['tools', 'effort']);
  });

  it('take effort, colour, memory: project or local and every honoured field', () => {
    const ok: AgentDefinition = { ...base, effort: 'max', color: 'pink', isolation: 'worktree', model: 'claude-opus-4-8', maxTurns: 3, tools: ['Glob'], memory: 'local' };
    expect(inlineDefinitionProblems(ok)).toEqual([]);
    expect(start([ok]).success).toBe(true);
  });

  it('are not checked again for a run continuing, or a sub-agent inheriting its tree\'s agents', () => {
    const old = [{ ...base, memory: 'user' as const }];
    expect(start(old, { parentAgentId: 'root', rootAgentId: 'root' }).success).toBe(true);
  });

  it('a start input takes effort and colour from their lists only', () => {
    expect(forkInputSchema.safeParse({ prompt: 'Go.', effort: 'xhigh', color: 'cyan' }).success).toBe(true);
    expect(describeIssues(forkInputSchema.safeParse({ prompt: 'Go.', effort: 'extreme' }).error!)[0]).toMatch(/^effort: /);
    expect(describeIssues(forkInputSchema.safeParse({ prompt: 'Go.', color: 'mauve' }).error!)[0]).toMatch(/^color: /);
  });
});

describe('colour', () => {
  const info = (memo?: Record<string, unknown>) =>
    ({ workflowId: 'a', runId: 'r', status: { name: 'RUNNING' }, startTime: new Date(0), typedSearchAttributes: new TypedSearchAttributes(), ...(memo ? { memo } : {}) }) as unknown as WorkflowExecutionInfo;

  it('rides in the start memo (with hidden, when both) and comes back from a listing; an unknown value is not shown', () => {
    expect(startMemo({})).toEqual({});
    expect(startMemo({ color: 'blue' })).toEqual({ memo: { [COLOR_MEMO_KEY]: 'blue' } });
    expect(startMemo({ color: 'blue', skipTranscript: true })).toEqual({ memo: { forkflowHidden: true, [COLOR_MEMO_KEY]: 'blue' } });
    expect(toAgentRow(info({ [COLOR_MEMO_KEY]: 'blue' })).color).toBe('blue');
    expect(toAgentRow(info())).not.toHaveProperty('color');
    expect(colorOfMemo({ [COLOR_MEMO_KEY]: '\u001b[31mred' })).toBeUndefined();
  });

  it('shows in `forkflow top` (a colour column only when some agent has one) and in `watch --tree` lines', () => {
    const coloured = renderTop({ at: 'now', agents: { query: 'q', open: 2, listed: 2, groups: [{ label: 'review', state: 'running', color: 'green', count: 1 }, { label: 'other', state: 'idle', count: 1 }] } });
    expect(coloured).toMatch(/│ label +│ colour +│ state +│ agents +│/);
    expect(coloured).toMatch(/│ review +│ green +│ running +│ 1 +│/);
    const plain = renderTop({ at: 'now', agents: { query: 'q', open: 1, listed: 1, groups: [{ label: 'other', state: 'idle', count: 1 }] } });
    expect(plain).not.toContain('colour');
    const rows = [{ ...toAgentRow(info({ [COLOR_MEMO_KEY]: 'green' })), label: 'review' }];
    expect(treeLines(rows, 'a')).toEqual(['▶ a (green) [review] · running']);
  });
});
