/**
 * What a turn costs in Temporal itself on this server, with nothing of forkflow in it: a
 * workflow whose turns have a fork's shape (an activity, then a local activity) and do no
 * work, on a worker of its own. Its turn time, measured like the durable loop's (the gap
 * between consecutive "model" activity starts), is the least a durable turn of that shape can
 * take here; the durable loop's overhead is read against it.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { FloorActivities } from './floor-workflow';

const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };
let floorBundle: Promise<{ code: string }> | undefined;

/**
 * Runs `runs` floor workflows of `turns` turns one after another; the gaps between turns, ms.
 * Its own connections and the SDK's default payload converter: nothing of forkflow's.
 */
export async function turnFloor(o: { address: string; namespace: string; turns: number; runs: number }): Promise<number[]> {
  floorBundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('./floor-workflow'), logger: quiet });
  const taskQueue = `bench-floor-${randomUUID().slice(0, 8)}`;
  const reply = 'x'.repeat(2_000);
  let starts: number[] = [];
  const activities: FloorActivities = {
    floorModel: () => {
      starts.push(performance.now());
      return Promise.resolve(reply);
    },
    floorTool: () => Promise.resolve('one\ntwo\nthree\n'),
  };
  const connection = await NativeConnection.connect({ address: o.address });
  const clientConnection = await Connection.connect({ address: o.address });
  const temporal = new Client({ connection: clientConnection, namespace: o.namespace });
  const gaps: number[] = [];
  try {
    const worker = await Worker.create({ connection, namespace: o.namespace, taskQueue, workflowBundle: await floorBundle, activities });
    await worker.runUntil(async () => {
      // One unmeasured run first, as the durable loop has its warm-up.
      for (let run = -1; run < o.runs; run++) {
        starts = [];
        await temporal.workflow.execute('floorWorkflow', { taskQueue, workflowId: `${taskQueue}-${run}`, args: [o.turns] });
        if (starts.length !== o.turns) throw new Error(`floor run made ${starts.length} of ${o.turns} turns`);
        if (run >= 0) gaps.push(...starts.slice(1).map((t, i) => t - starts[i]!));
      }
    });
  } finally {
    await clientConnection.close();
    await connection.close();
  }
  return gaps;
}
