/**
 * Acceptance of teams (issue 32): a lead and three teammates exchange messages — a broadcast,
 * a relay by name teammate → teammate → lead, structured shutdown requests — on a worker in its
 * own process that is SIGKILLed twice mid-relay, while lead and teammates continue as new every
 * two turns. Every message is delivered exactly once, in order per sender, and counted once.
 */
import type { MessageParam } from '../../src/shared/messages-api/anthropic';
import { blocksOf } from '../../src/shared/messages-api/anthropic';
import { ForkflowClient } from '../../src/client';
import { startHarness, uniqueTaskQueue, type Harness } from '../kit/env';
import { startWorkerProcess } from '../kit/processes';
import { deliveredMarkers, deliveries, leadPrompt, MATES } from '../kit/team';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'teams-crash' });
});
afterAll(() => h?.close());

/** A request in flight whose newest user turn delivers the message marked `marker`. */
function delivering(marker: string) {
  return (e: { outcome: string; body?: unknown }) => {
    if (e.outcome !== 'pending') return false;
    const messages = (e.body as { messages?: MessageParam[] } | undefined)?.messages ?? [];
    const last = [...messages].reverse().find((m) => m.role === 'user');
    return last !== undefined && blocksOf(last).some((b) => b.type === 'text' && b.text.startsWith('[message ') && b.text.includes(marker));
  };
}

test('a team exchanges every message exactly once, in order, through two SIGKILLs and continue-as-new', async () => {
  const taskQueue = uniqueTaskQueue('teams-crash');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const opts = { address: h.env.address, taskQueue, modelUrl: h.model.url, workspace: h.workspaceRoot, bundlePath: h.env.bundlePath };
  let worker = await startWorkerProcess(opts);
  const leadId = 'crash-lead';
  try {
    const handle = await forkflow.startAgent({ agentId: leadId, prompt: leadPrompt({ slow: 3000 }), subAgents: { forkGate: false, teams: true }, continueAsNew: { turnsPerRun: 2 } });
    // First kill: while a holds the relay's first message (its model call is in flight).
    await h.model.log.waitFor(delivering('MSG lead#2'), { timeoutMs: 120_000 });
    await worker.kill('SIGKILL');
    worker = await startWorkerProcess(opts);
    // Second kill: while c holds the message b relayed to it.
    await h.model.log.waitFor(delivering('MSG b#1'), { timeoutMs: 120_000 });
    await worker.kill('SIGKILL');
    worker = await startWorkerProcess(opts);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'team ended' });
    expect(result.children?.map((c) => c.state)).toEqual(['completed', 'completed', 'completed']);

    const ids = Object.fromEntries(MATES.map((m, i) => [m, `${leadId}.${m}-${i + 1}`]));
    const transcripts = Object.fromEntries(await Promise.all(MATES.map(async (m) => [m, await forkflow.transcript(ids[m]!)] as const)));
    const lead = await forkflow.transcript(leadId);
    // Exactly once each, in the order each sender sent them.
    expect(deliveredMarkers(transcripts.a!)).toEqual(['lead#1', 'lead#2']);
    expect(deliveredMarkers(transcripts.b!)).toEqual(['lead#1', 'a#1']);
    expect(deliveredMarkers(transcripts.c!)).toEqual(['lead#1', 'b#1']);
    expect(deliveredMarkers(lead)).toEqual(['c#1']);
    for (const m of MATES) expect(deliveries(transcripts[m]!, 'MSG lead#1')).toBe(1);
    const ledger = (await forkflow.status(leadId)).perAgent!;
    expect(Object.fromEntries(ledger.map((n) => [n.name ?? 'lead', n.messages]))).toEqual({ lead: { sent: 5, received: 1 }, a: { sent: 1, received: 3 }, b: { sent: 1, received: 3 }, c: { sent: 1, received: 3 } });

    // The lead and the teammates did continue as new on the way: each one's latest run continued an earlier one.
    for (const id of [leadId, ...Object.values(ids)]) {
      const history = await h.client.workflow.getHandle(id).fetchHistory();
      const continued = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
      expect({ id, continued: Boolean(continued) }).toEqual({ id, continued: true });
    }
  } finally {
    await worker.kill();
  }
});
