/** The web view's list: running rows get their counters from status; finished ones and failed queries keep visibility's. */
import { withLiveCounters } from '../../../src/cli/web/live-rows';
import type { AgentRow, ForkStatus } from '../../../src/client';

const row = (agentId: string, temporalStatus: string, extra: Partial<AgentRow> = {}): AgentRow => ({ agentId, workflowId: agentId, runId: 'r', temporalStatus, startTime: '2026-12-07T00:00:00.000Z', ...extra });
const usage = { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 1000, cacheCreationInputTokens: 50 };

test('running rows read turns, tokens and state from status; a finished row and a failed query keep visibility', async () => {
  const asked: string[] = [];
  const status = (id: string): Promise<ForkStatus> => {
    asked.push(id);
    if (id === 'broken') return Promise.reject(new Error('no worker'));
    return Promise.resolve({ state: 'running', turns: 7, usage } as unknown as ForkStatus);
  };
  const rows = [row('live', 'RUNNING'), row('done', 'COMPLETED', { turns: 3, totalTokens: 900, state: 'completed' }), row('broken', 'RUNNING')];
  const out = await withLiveCounters(rows, status);
  expect(out[0]).toMatchObject({ agentId: 'live', state: 'running', turns: 7, totalTokens: 1170 });
  expect(out[1]).toEqual(rows[1]);
  expect(out[2]).toEqual(rows[2]);
  expect(asked.sort()).toEqual(['broken', 'live']);
});
