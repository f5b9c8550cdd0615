/**
 * Long-lived parents: an agent with many turns and children (120 and 15 in `npm test`, 300
 * and 40 under `npm run bench:soak`), on a dev server whose "suggest continue-as-new"
 * threshold is lowered, continues as new several times and ends with the same transcript and
 * usage totals as the same agent on a server that never suggests it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ForkResult } from '../../src/client';
import type { MessageParam } from '../../src/shared/messages-api/anthropic';
import { ZERO_USAGE, type Usage } from '../../src/shared/messages-api/anthropic';
import type { OfflineModel } from '../../src/offline';
import { startHarness, tempDir, type Harness } from '../kit/env';
import { bodyOf, messageRequests } from '../kit/requests';
import { startOwnServer } from '../kit/own-server';
import { agentStep, script } from '../kit/tree';
import { soakOr } from '../kit/soak';

jest.setTimeout(300_000);

const TURNS = soakOr(120, 300);
const CHILDREN = soakOr(15, 40);
/** Events before the server suggests continuing: several runs at either size. */
const SUGGEST_AT = soakOr(150, 300);
const prompt = script(
  'Long haul.',
  `@repeat ${CHILDREN} ${agentStep({ description: 'helper', subagent_type: 'general-purpose', prompt: 'Help.\n@reply helped' })}`,
  `@repeat ${TURNS - CHILDREN - 1} @tool Read {"file_path":"small.txt"}`,
  '@reply done',
);
const params = {
  agentId: 'long-haul',
  prompt,
  maxTurns: TURNS + 10,
  budget: { maxTokens: 100_000_000 },
  subAgents: { forkGate: false, maxChildren: 50, maxTreeRunning: 100, perAgentMaxTokens: 1_000_000 },
};

/** What a model served the tree (every completed request), and how many request bodies it was asked more than once. */
function served(model: OfflineModel): { usage: Usage; requests: number; repeated: number } {
  const usage = { ...ZERO_USAGE };
  const bodies = new Map<string, number>();
  const done = messageRequests(model).filter((e) => e.outcome === 'completed' && e.usage);
  for (const e of done) {
    usage.inputTokens += e.usage!.input_tokens;
    usage.outputTokens += e.usage!.output_tokens;
    usage.cacheReadInputTokens += e.usage!.cache_read_input_tokens ?? 0;
    usage.cacheCreationInputTokens += e.usage!.cache_creation_input_tokens ?? 0;
    const key = JSON.stringify(bodyOf(e).messages);
    bodies.set(key, (bodies.get(key) ?? 0) + 1);
  }
  return { usage, requests: done.length, repeated: [...bodies.values()].filter((n) => n > 1).length };
}

let h: Harness;
let workspace: string;
beforeAll(async () => {
  workspace = tempDir('long');
  writeFileSync(join(workspace, 'small.txt'), 'one\ntwo\n');
  h = await startHarness({ name: 'long-ref', workspaceRoot: workspace });
});
afterAll(() => h.close());

test(`${TURNS} turns and ${CHILDREN} children: continued as new, same transcript and usage as without`, async () => {
  const reference: ForkResult = await h.forkflow.startAgent(params).then((a) => a.result());
  expect(reference).toMatchObject({ status: 'completed', turns: TURNS, text: 'done' });
  const referenceTranscript: MessageParam[] = await h.forkflow.transcript('long-haul');

  // A fresh offline model (a fresh cache, as the reference run had) on a server that suggests continuing early.
  const own = await startOwnServer({ name: 'long-can', workspaceRoot: workspace, server: { logLevel: 'error', dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_AT } } });
  const { client, forkflow, worker } = own;
  try {
    // Queries on closed runs are answered by a worker replaying them: read while it runs.
    const [result, transcript] = await worker.runUntil(async () => {
      const r = await forkflow.startAgent(params).then((a) => a.result());
      return [r, await forkflow.transcript('long-haul')] as const;
    });
    const runs: string[] = [];
    for await (const run of client.workflow.list({ query: "WorkflowId = 'long-haul'" })) runs.push(run.runId);
    console.log(`continue-as-new: ${runs.length} runs for ${TURNS} turns and ${CHILDREN} children (reference: 1 run)`);
    expect(runs.length).toBeGreaterThan(1);
    expect(result).toMatchObject({ status: 'completed', turns: TURNS, text: 'done', toolUses: reference.toolUses });
    expect(result.usage).toEqual(reference.usage);
    // Each tree's totals against what its own model served: which run is off, when they differ.
    const [servedRef, servedCan] = [served(h.model), served(own.model)];
    console.log(`continue-as-new: tree usage ${JSON.stringify(result.treeUsage)}, its model served ${JSON.stringify(servedCan)}; reference ${JSON.stringify(reference.treeUsage)}, served ${JSON.stringify(servedRef)}`);
    expect({ reference: reference.treeUsage, continued: result.treeUsage }).toEqual({ reference: servedRef.usage, continued: servedCan.usage });
    expect(result.treeUsage).toEqual(reference.treeUsage);
    expect(result.children).toHaveLength(CHILDREN);
    expect(transcript).toEqual(referenceTranscript);
  } finally {
    await own.close();
  }
});
