/**
 * A TypeScript tool service in a process of its own, as a service would run one: forkflow's
 * helper (`createToolWorker` from forkflow/worker) serving the order desk's tools
 * (./service-tools.ts) on a task queue. Prints "tool worker polling <pid>" once it polls.
 *
 * Usage: node -r tsx/cjs tool-worker-process.ts <address> <namespace> <task queue> <state dir>
 */
import { NativeConnection } from '@temporalio/worker';
import { createToolWorker } from '../../src/worker/tools';
import { installRuntime } from '../../src/worker/runtime';
import { orderDeskHooks, orderDeskTools } from './service-tools';

async function main(): Promise<void> {
  const [address, namespace, taskQueue, stateDir] = process.argv.slice(2);
  if (!address || !namespace || !taskQueue || !stateDir) throw new Error('usage: tool-worker-process.ts <address> <namespace> <task queue> <state dir>');
  installRuntime({ logLevel: 'ERROR' });
  const connection = await NativeConnection.connect({ address });
  const worker = await createToolWorker({ connection, namespace, taskQueue, tools: orderDeskTools(stateDir), hooks: orderDeskHooks(stateDir) });
  process.stdout.write(`tool worker polling ${process.pid}\n`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
