/**
 * forkflow's TypeScript helper for service tools (`forkflow/worker`), run as the contract's
 * activities in a mock activity context: a call is checked, its tool found, its input checked
 * against the zod schema; what the model should read comes back as a result, a throw as a
 * failure; hooks answer by event, the first denial winning. The same definitions give the
 * JSON Schema offered to the model and routes forkflow accepts.
 */
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { routesSchema } from '../../../src/shared/tools/routes';
import { defineHook, defineTool, serviceActivities, toolDefinitions, toolRoutes } from '../../../src/worker/tools';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number().describe('the second') }),
  readOnly: true,
  run: ({ a, b }, call) => `${a + b} (attempt ${call.attempt}, ${call.toolUseId})`,
});
const fail = defineTool({ name: 'fail', description: 'Fails.', input: z.object({}), run: () => { throw new Error('db down'); } });
const big = defineTool({ name: 'big', description: 'Big.', input: z.object({}), maxResultBytes: 1024, run: () => ({ content: [{ type: 'text' as const, text: 'z'.repeat(2000) }] }) });

const call = (tool: string, input: unknown, extra: Record<string, unknown> = {}) => ({ v: 1, tool, input, tool_use_id: 'toolu_1', agent_id: 'a', root_id: 'r', turn: 2, attempt: 1, ...extra });
const run = (activities: ReturnType<typeof serviceActivities>, name: string, input: unknown) => new MockActivityEnvironment().run(activities[name]!, input);

test('forkflow.callTool: the tool runs with its checked input; errors the model should read are results', async () => {
  const a = serviceActivities([add, fail, big]);
  expect(await run(a, 'forkflow.callTool', call('add', { a: 2, b: 3 }, { attempt: 2 }))).toEqual({ content: '5 (attempt 2, toolu_1)' });
  expect(await run(a, 'forkflow.callTool', call('add', { a: 2 }))).toEqual({ is_error: true, content: 'Invalid input for add: b: is missing. Fix the input and call it again.' });
  expect(await run(a, 'forkflow.callTool', call('nope', {}))).toEqual({ is_error: true, content: 'This service has no tool named "nope" (it serves add, fail, big).' });
  expect(await run(a, 'forkflow.callTool', call('big', {}))).toEqual({ is_error: true, content: 'big produced 2000 bytes, more than the 1024 it may return: ask for less.' });
});

test('a tool that throws fails the activity with its message; a call that is not the contract is refused for good', async () => {
  const a = serviceActivities([fail]);
  const thrown = await run(a, 'forkflow.callTool', call('fail', {})).catch((e: unknown) => e);
  expect(thrown).toBeInstanceOf(ApplicationFailure);
  expect(thrown).toMatchObject({ type: 'ToolFailed', message: 'db down' });
  const refused = await run(a, 'forkflow.callTool', { tool: 'fail' }).catch((e: unknown) => e);
  expect(refused).toMatchObject({ type: 'NotAToolCall', nonRetryable: true });
});

test('forkflow.hook: each event to its hooks, answers merged, the first denial winning', async () => {
  const seen: string[] = [];
  const a = serviceActivities([], [
    defineHook({ event: 'PreToolUse', run: (c) => (seen.push(`1:${c.tool}`), { input: { a: 1, b: 1 } }) }),
    defineHook({ event: 'PreToolUse', run: (c) => (seen.push(`2:${c.tool}`), c.tool === 'rm' ? { decision: 'deny', message: 'no' } : {}) }),
    defineHook({ event: 'SubagentStart', run: () => ({ additional_context: 'ctx' }) }),
  ]);
  const base = { v: 1, agent_id: 'a', root_id: 'r', turn: 0 };
  expect(await run(a, 'forkflow.hook', { ...base, event: 'PreToolUse', tool: 'add', input: {} })).toEqual({ input: { a: 1, b: 1 } });
  expect(await run(a, 'forkflow.hook', { ...base, event: 'PreToolUse', tool: 'rm', input: {} })).toEqual({ decision: 'deny', message: 'no' });
  expect(await run(a, 'forkflow.hook', { ...base, event: 'SubagentStart', prompt: 'p' })).toEqual({ additional_context: 'ctx' });
  expect(await run(a, 'forkflow.hook', { ...base, event: 'Stop' })).toEqual({});
  expect(seen).toEqual(['1:add', '2:add', '1:rm', '2:rm']);
  expect(serviceActivities([add])['forkflow.hook']).toBeUndefined();
});

test('the definitions give the JSON Schema the model is offered, and routes forkflow accepts', () => {
  expect(toolDefinitions([add])).toEqual([
    {
      name: 'add',
      description: 'Adds two numbers.',
      input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number', description: 'the second' } }, required: ['a', 'b'] },
    },
  ]);
  const routes = routesSchema.parse(toolRoutes([add, fail], 'q', { scheduleToStart: '5s' }));
  expect(routes.map((r) => [r.tools, r.readOnly, r.idempotent, r.scheduleToStart])).toEqual([
    [['add'], true, true, '5s'],
    [['fail'], false, false, '5s'],
  ]);
  expect(routes[0]!.definitions).toEqual(toolDefinitions([add]));
  expect(() => defineTool({ name: 'bad name', description: '', input: z.object({}), run: () => '' })).toThrow('tool name "bad name"');
});
