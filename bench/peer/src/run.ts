/**
 * Runs the peer's side of `npm run bench:peer` under Node >= 22.12 (the orchestrator,
 * bench/peer.ts, spawns it): a worker with AiSdkPlugin and the AI SDK's Anthropic provider
 * pointed at the offline model, then each readerAgent it is given, to completion, one after
 * another. Prints one JSON line (each run's workflow ids, start time and wall time) on
 * stdout; the orchestrator reads histories and the model's log itself, the same way for both
 * systems.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, DefaultLogger } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { createReadActivities } from './activities.ts';
import type { readerAgent } from './workflows.ts';

interface PeerConfig {
  address: string;
  namespace: string;
  modelUrl: string;
  workspace: string;
  system: string;
  /** Run one after another (a warm-up, then the measured one). */
  runs: { workflowId: string; prompt: string; maxSteps: number; siblings: string[] }[];
}

const config = JSON.parse(process.argv[2] ?? '') as PeerConfig;
Runtime.install({ logger: new DefaultLogger('ERROR') });
const taskQueue = `bench-peer-${process.pid}`;
const anthropic = createAnthropic({ baseURL: `${config.modelUrl}/v1`, apiKey: 'offline' });
const connection = await NativeConnection.connect({ address: config.address });
const worker = await Worker.create({
  connection,
  namespace: config.namespace,
  taskQueue,
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  activities: createReadActivities(config.workspace),
  plugins: [new AiSdkPlugin({ modelProvider: anthropic })],
});
const client = new Client({ connection: await Connection.connect({ address: config.address }), namespace: config.namespace });
const results = await worker.runUntil(async () => {
  const done = [];
  for (const run of config.runs) {
    const started = Date.now();
    const handle = await client.workflow.start<typeof readerAgent>('readerAgent', {
      taskQueue,
      workflowId: run.workflowId,
      args: [{ system: config.system, prompt: run.prompt, maxSteps: run.maxSteps, siblings: run.siblings }],
    });
    const { siblingIds } = await handle.result();
    done.push({ workflowId: run.workflowId, siblingIds, startedAt: started, wallMs: Date.now() - started });
  }
  return done;
});
process.stdout.write(`${JSON.stringify(results)}\n`);
await connection.close();
await client.connection.close();
