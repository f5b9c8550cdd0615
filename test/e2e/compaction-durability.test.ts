/**
 * A compaction is a durable step like any model call: a worker SIGKILLed while its summary
 * call is in flight costs nothing but a retry. Another worker makes the call again, the agent
 * completes with the fact of turn 3 recalled, and the compaction is billed once: the model
 * completed one summary, and the agent's usage (and its tree's ledger) is exactly what the
 * model completed for it.
 */
import { addUsage, ZERO_USAGE, type Usage } from '../../src/shared/messages-api/anthropic';
import { isSummaryRequest } from '../../src/offline';
import { ForkflowClient } from '../../src/client';
import { startHarness, uniqueTaskQueue, type Harness } from '../kit/env';
import { startWorkerProcess } from '../kit/processes';
import { bodyOf, messageRequests } from '../kit/requests';
import { FACT, longAgentScript, seedLongAgent } from '../kit/long-agent';

jest.setTimeout(180_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'compaction-durability', noWorker: true, model: { contextWindow: (m) => (m === 'claude-ctx-20k' ? 20_000 : 200_000) } });
  seedLongAgent(h.workspaceRoot, 2_000);
});
afterAll(() => h.close());

const usageOf = (u: NonNullable<ReturnType<typeof messageRequests>[number]['usage']>): Usage => ({
  inputTokens: u.input_tokens,
  outputTokens: u.output_tokens,
  cacheReadInputTokens: u.cache_read_input_tokens,
  cacheCreationInputTokens: u.cache_creation_input_tokens,
});

test('a worker SIGKILLed during a compaction call: the agent completes, the compaction billed once', async () => {
  const taskQueue = uniqueTaskQueue('compaction-kill');
  const forkflow = new ForkflowClient(h.client, { taskQueue });
  const workerOpts = { address: h.env.address, taskQueue, modelUrl: h.model.url, workspace: h.workspaceRoot, bundlePath: h.env.bundlePath };
  // The first summary request is held long enough for the worker to die under it.
  h.model.faults.add({ kind: 'latency', ms: 5_000, match: (e) => isSummaryRequest(bodyOf(e).messages) });
  const first = await startWorkerProcess(workerOpts);
  const agentId = 'compaction-kill';
  const handle = await forkflow.startAgent({ agentId, prompt: longAgentScript(40, agentId), model: 'claude-ctx-20k', contextWindow: 20_000, maxTurns: 40, budget: { maxTokens: 100_000_000 } });

  const inFlight = await h.model.log.waitFor((e) => e.outcome === 'pending' && isSummaryRequest(bodyOf(e).messages), { timeoutMs: 60_000 });
  await first.kill('SIGKILL');
  await h.model.log.waitFor((e) => e.seq === inFlight.seq && e.outcome === 'aborted');
  const second = await startWorkerProcess(workerOpts);
  try {
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', turns: 40, text: `Recalled: ${FACT}` });
    expect(result.context!.compactions).toBe(1);

    const mine = messageRequests(h.model).filter((e) => JSON.stringify(bodyOf(e).messages).includes(`(agent ${agentId})`));
    const summaries = mine.filter((e) => isSummaryRequest(bodyOf(e).messages));
    // One summary asked for twice (the first cut off by the kill), completed once.
    expect(summaries.map((e) => e.outcome)).toEqual(['aborted', 'completed']);
    expect(result.context!.summarising.usage).toEqual(usageOf(summaries[1]!.usage!));
    // Billed once: the agent's usage is exactly what the model completed for it, summary included.
    const completed = mine.filter((e) => e.outcome === 'completed').map((e) => usageOf(e.usage!));
    expect(result.usage).toEqual(completed.reduce(addUsage, ZERO_USAGE));
    // The tree's ledger charged the compaction once, by its number.
    const status = await forkflow.status(agentId);
    const node = status.perAgent?.find((a) => a.agentId === agentId);
    expect(node).toMatchObject({ compactions: 1, usage: result.usage });
  } finally {
    await second.kill();
  }
});
