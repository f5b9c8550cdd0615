/** The web view's list: running rows read their counters from their tree's ledger, else their own status; finished ones and failed queries keep visibility's. */
import { withLiveCounters } from '../../../src/cli/web/live-rows';
import type { AgentRow, ForkStatus } from '../../../src/client';

const row = (agentId: string, temporalStatus: string, extra: Partial<AgentRow> = {}): AgentRow => ({ agentId, workflowId: agentId, runId: 'r', temporalStatus, startTime: '2026-12-07T00:00:00.000Z', ...extra });
const usage = { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 1000, cacheCreationInputTokens: 50 };
const ledgerRow = (agentId: string, turns: number, inputTokens: number) => ({ agentId, model: 'm', state: 'running', budget: 0, charged: 0, usage: { ...usage, inputTokens }, costUsd: 0, turns, toolUses: 0, runs: 1 });

test('running rows read turns, tokens and state from status; a finished row and a failed query keep visibility', async () => {
  const asked: string[] = [];
  const status = (id: string): Promise<ForkStatus> => {
    asked.push(id);
    if (id === 'broken') return Promise.reject(new Error('no worker'));
    return Promise.resolve({ state: 'running', turns: 7, usage } as unknown as ForkStatus);
  };
  const rows = [row('live', 'RUNNING'), row('done', 'COMPLETED', { turns: 3, totalTokens: 900, state: 'completed' }), row('broken', 'RUNNING')];
  const out = await withLiveCounters(rows, status);
  expect(out[0]).toMatchObject({ agentId: 'live', state: 'running', turns: 7, totalTokens: 1170, counters: 'status' });
  expect(out[1]).toEqual({ ...rows[1], counters: 'visibility' });
  expect(out[2]).toEqual({ ...rows[2], counters: 'visibility' });
  expect(asked.sort()).toEqual(['broken', 'live']);
});

test('a tree is read with one query, its root’s: every running member’s counters are its ledger’s; a member the ledger lacks asks its own status', async () => {
  const asked: string[] = [];
  const status = (id: string): Promise<ForkStatus> => {
    asked.push(id);
    if (id === 'root') return Promise.resolve({ state: 'waiting', turns: 4, usage, perAgent: [ledgerRow('root', 4, 500), ledgerRow('root.a-1', 2, 300)] } as unknown as ForkStatus);
    return Promise.resolve({ state: 'running', turns: 1, usage } as unknown as ForkStatus);
  };
  const rows = [row('root', 'RUNNING', { state: 'running' }), row('root.a-1', 'RUNNING', { rootId: 'root', parentId: 'root', state: 'running' }), row('root.late-2', 'RUNNING', { rootId: 'root', parentId: 'root' })];
  const out = await withLiveCounters(rows, status);
  expect(out.map((r) => [r.agentId, r.state, r.turns, r.totalTokens, r.counters])).toEqual([
    ['root', 'waiting', 4, 1570, 'ledger'],
    ['root.a-1', 'running', 2, 1370, 'ledger'],
    ['root.late-2', 'running', 1, 1170, 'status'],
  ]);
  expect(asked).toEqual(['root', 'root.late-2']);
});
