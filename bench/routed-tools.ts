/**
 * `npm run bench:tools`: what routing a tool call to a service costs over a built-in one.
 * The same 30-turn conversation (one read-only tool call a turn, no model latency) runs three
 * ways against the offline model on a real dev server: a built-in Read (a local activity on
 * the fork's worker), a routed read-only tool on a service's own queue (forkflow's helper, a
 * worker in this process: a real activity round trip through the server), and an MCP tool of
 * a stdio server (server-filesystem, a session on the fork's worker). Turn time = gap between
 * consecutive model requests as the emulator saw them; the routed call's cost is the
 * difference of the medians.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { parseMcpCommandRule } from '../src/worker/consent';
import { createToolWorker, defineTool, toolRoutes } from '../src/worker/tools';
import { median, percentile, printTable, startBenchStack, turnGaps } from './kit';

const TURNS = 30;
const RUNS = 3;

async function main(): Promise<void> {
  const fsMain = join(__dirname, '..', 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
  // The worker's operator allows exactly the filesystem server this bench starts.
  const bench = await startBenchStack('tools', { consent: (ws) => ({ mcpCommands: [parseMcpCommandRule(`${process.execPath} ${fsMain} ${join(ws, 'docs')}`)], allowBypassPermissions: false }) });
  const { client, model, workspace } = bench;
  writeFileSync(join(workspace, 'small.txt'), 'one\ntwo\nthree\n');
  const docs = join(workspace, 'docs');
  mkdirSync(docs);
  writeFileSync(join(docs, 'small.txt'), 'one\ntwo\nthree\n');

  const lookup = defineTool({ name: 'lookup', description: 'Look a key up.', input: z.object({ key: z.string() }), readOnly: true, run: ({ key }) => `value of ${key}` });
  const queue = `${bench.stack.taskQueue}-service`;
  const connection = await NativeConnection.connect({ address: bench.stack.server.address });
  const worker = await createToolWorker({ connection, namespace: 'default', taskQueue: queue, tools: [lookup] });
  const running = worker.run();

  const fsServer = { fs: { command: process.execPath, args: [fsMain, docs] } };
  const shapes = {
    'built-in Read': { step: '@tool Read {"file_path":"small.txt"}', extra: {} },
    'routed tool (service queue)': { step: '@tool lookup {"key":"k"}', extra: { routes: toolRoutes([lookup], queue) } },
    'MCP tool (stdio session)': { step: `@tool mcp__fs__read_text_file ${JSON.stringify({ path: join(docs, 'small.txt') })}`, extra: { mcpServers: fsServer } },
  } as const;

  const gaps: Record<string, number[]> = {};
  for (const [name, shape] of Object.entries(shapes)) {
    const prompt = `Loop.\n@repeat ${TURNS - 1} ${shape.step}\n@reply done`;
    // Warm-up: caches, the session, the tool worker's first task.
    await client.fork({ prompt, maxTurns: TURNS + 5, forkLabel: 'warmup', ...shape.extra }, { mode: 'sync' });
    gaps[name] = [];
    for (let run = 0; run < RUNS; run++) {
      model.log.clear();
      const result = await client.fork({ agentId: `bench-tools-${run}-${Date.now()}`, prompt, maxTurns: TURNS + 5, ...shape.extra }, { mode: 'sync' });
      if (result.turns !== TURNS || result.status !== 'completed') throw new Error(`${name}: ${result.status} after ${result.turns} turns (${result.error ?? ''})`);
      gaps[name].push(...turnGaps(model));
    }
  }
  worker.shutdown();
  await running;
  await connection.close();
  await bench.stop();

  const builtin = median(gaps['built-in Read']!);
  const rows: [string, string][] = Object.entries(gaps).map(([name, g]) => [name, `median ${median(g).toFixed(1)} ms · p95 ${percentile(g, 95).toFixed(1)} ms · ${g.length} turns`]);
  rows.push(['routed − built-in (median)', `${(median(gaps['routed tool (service queue)']!) - builtin).toFixed(1)} ms`]);
  rows.push(['MCP − built-in (median)', `${(median(gaps['MCP tool (stdio session)']!) - builtin).toFixed(1)} ms`]);
  printTable(`Turn time with one tool call (${TURNS} turns × ${RUNS} runs, offline model)`, rows);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
  process.exit(1);
});
