/**
 * `npm run bench`: what durability costs per turn. The same 50-turn conversation (a Read
 * every turn, no model latency) runs twice against the offline model: as a forkWorkflow on
 * a real dev server, and as a plain in-process loop making the same HTTP calls and running
 * the same tool code. Turn time = gap between consecutive model requests as the emulator
 * saw them. Also: fork start latency (start call → first model request) and history bytes
 * per turn.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { runBuiltinTool } from '../src/activities/tools';
import { toolUsesOf, type MessageParam, type ToolResultBlock } from '../src/shared/messages-api/anthropic';
import { toParamBlock } from '../src/activities/model/call-model';
import { buildMessagesRequest } from '../src/shared/messages-api/request';
import { createModelClient } from '../src/worker/model-client';
import { turnFloor } from './floor';
import { median, percentile, printTable, startBenchStack, turnGaps } from './kit';
import { mergeSamples, phaseRows, phaseSamples, type PhaseSamples } from './phases';

const TURNS = 50;
const RUNS = 3;

async function main(): Promise<void> {
  const stack = await startBenchStack('loop');
  const { client, model, workspace, conversations } = stack;
  writeFileSync(join(workspace, 'small.txt'), 'one\ntwo\nthree\n');
  const prompt = `Loop.\n@repeat ${TURNS - 1} @tool Read {"file_path":"small.txt"}\n@reply done`;

  // Warm up worker caches and the workflow bundle's first run; its opening is the in-process seed.
  const warmup = await client.start({ prompt, maxTurns: TURNS + 5, forkLabel: 'warmup' });
  await warmup.result();
  const seed = await client.snapshotOf(warmup.agentId);

  const durable: number[] = [];
  let historyPerTurn = 0;
  let eventsPerTurn = 0;
  const phases: PhaseSamples[] = [];
  for (let run = 0; run < RUNS; run++) {
    model.log.clear();
    const agentId = `bench-durable-${run}-${Date.now()}`;
    const result = await client.fork({ agentId, prompt, maxTurns: TURNS + 5 }, { mode: 'sync' });
    if (result.turns !== TURNS) throw new Error(`durable run took ${result.turns} turns`);
    durable.push(...turnGaps(model));
    const history = await client.temporal.workflow.getHandle(agentId).fetchHistory();
    historyPerTurn = temporal.api.history.v1.History.encode(history).finish().length / TURNS;
    eventsPerTurn = (history.events?.length ?? 0) / TURNS;
    phases.push(phaseSamples(history.events ?? [], model.log.entries().filter((e) => e.path === '/v1/messages')));
  }

  // The same conversation, in process: same request builder, same SDK, same tool code.
  const anthropic = createModelClient({ apiKey: 'bench', baseURL: model.url });
  const inProcess: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    model.log.clear();
    const messages: MessageParam[] = [seed.messages[0]!];
    const ctx = { model: seed.model, system: seed.system, tools: seed.tools, maxTokens: seed.maxTokens ?? 8192, cacheKeyHash: '' };
    for (let turn = 0; turn < TURNS; turn++) {
      const body = buildMessagesRequest(ctx, messages);
      const reply = await anthropic.messages.stream(body as never).finalMessage();
      const assistant: MessageParam = { role: 'assistant', content: reply.content.map(toParamBlock) };
      messages.push(assistant);
      const uses = toolUsesOf(assistant);
      if (uses.length === 0) break;
      const results: ToolResultBlock[] = [];
      for (const use of uses) {
        const out = await runBuiltinTool(use.name, use.input, { root: workspace, signal: new AbortController().signal, heartbeat: () => undefined, writePolicy: { kind: 'none' } });
        results.push({ type: 'tool_result', tool_use_id: use.id, content: out.content, ...(out.isError ? { is_error: true } : {}) });
      }
      messages.push({ role: 'user', content: results });
    }
    inProcess.push(...turnGaps(model));
  }

  // Fork start latency: start() returns → the emulator has the first request.
  const starts: number[] = [];
  for (let i = 0; i < 20; i++) {
    model.log.clear();
    const t0 = Date.now();
    const handle = await client.start({ prompt: '@reply hi', forkLabel: 'start-latency' });
    const first = await model.log.waitFor((e) => e.path === '/v1/messages');
    starts.push(first.receivedAt - t0);
    await handle.result();
  }

  // Temporal's own cost of a turn on this server, with nothing of forkflow in it: the fork's
  // shape, and the two shapes a turn could take instead (one activity; all local).
  const server = { address: stack.stack.server.address, namespace: stack.stack.server.namespace, turns: TURNS, runs: RUNS };
  const floor = await turnFloor({ ...server, shape: 'fork' });
  const remoteOnly = await turnFloor({ ...server, shape: 'remote' });
  const allLocal = await turnFloor({ ...server, shape: 'local' });
  const overhead = median(durable) - median(inProcess);
  const figure = (v: number[]) => `${median(v).toFixed(1)} / ${percentile(v, 95).toFixed(1)} ms`;
  const forkflowPhases = phaseRows(mergeSamples(phases));
  const floorPhases = new Map(phaseRows(floor.phases));

  printTable('forkflow bench: durable loop vs in-process loop (offline model, no latency)', [
    ['turns per run × runs', `${TURNS} × ${RUNS}`],
    ['in-process turn, median / p95', figure(inProcess)],
    ['durable turn, median / p95', figure(durable)],
    ['overhead per turn, median / p95', `${overhead.toFixed(1)} / ${(percentile(durable, 95) - percentile(inProcess, 95)).toFixed(1)} ms`],
    ['  Temporal floor: a bare turn of the same shape, median / p95', `${figure(floor.gaps)} (an activity, then a local activity, no work: bench/floor.ts)`],
    ["  forkflow's own, above that floor (median)", `${(overhead - median(floor.gaps)).toFixed(1)} ms`],
    ['Temporal floor of other shapes, median / p95', ''],
    ['  one activity a turn (the least with the model call an activity)', figure(remoteOnly.gaps)],
    ['  all local (the model call a local activity too)', figure(allLocal.gaps)],
    ['fork start → first model request, median / p95', figure(starts)],
    ['model calls served without a query', `${conversations.stats.localHits} (queries: ${conversations.stats.queries})`],
    ['history bytes per turn', `${Math.round(historyPerTurn)} B (a turn = model call + Read of a 14-byte file)`],
    ['history events per turn', eventsPerTurn.toFixed(1)],
    ['durable turn by phase, median / p95 (see bench/phases.ts)', 'forkflow · the floor of its shape'],
    ...forkflowPhases.map(([k, v]): [string, string] => [k, `${v} · ${floorPhases.get(k) ?? 'n/a'}`]),
  ]);
  await stack.stop();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
