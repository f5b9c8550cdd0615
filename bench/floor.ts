/**
 * What a turn costs in Temporal itself on this server, with nothing of forkflow in it: a
 * workflow whose turns do no work, on a worker of its own. Its turn time, measured like the
 * durable loop's (the gap between consecutive "model" starts), is the least a durable turn of
 * that shape can take here; the durable loop's overhead is read against it. Three shapes
 * (bench/floor-workflow.ts): a fork's own, one activity a turn, and all local.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { FloorActivities, FloorShape } from './floor-workflow';
import { mergeSamples, phaseSamples, type PhaseSamples } from './phases';

const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };
let floorBundle: Promise<{ code: string }> | undefined;

export interface Floor {
  /** Gaps between consecutive turns of the measured runs, ms. */
  gaps: number[];
  /** The measured runs' phases, read from their histories as the durable loop's are. */
  phases: PhaseSamples;
}

/**
 * Runs `runs` floor workflows of `turns` turns one after another, after one unmeasured run.
 * Its own connections and the SDK's default payload converter: nothing of forkflow's.
 */
export async function turnFloor(o: { address: string; namespace: string; turns: number; runs: number; shape?: FloorShape }): Promise<Floor> {
  floorBundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('./floor-workflow'), logger: quiet });
  const shape = o.shape ?? 'fork';
  const taskQueue = `bench-floor-${shape}-${randomUUID().slice(0, 8)}`;
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
  const phases: PhaseSamples[] = [];
  try {
    const worker = await Worker.create({ connection, namespace: o.namespace, taskQueue, workflowBundle: await floorBundle, activities });
    await worker.runUntil(async () => {
      for (let run = -1; run < o.runs; run++) {
        starts = [];
        const workflowId = `${taskQueue}-${run}`;
        await temporal.workflow.execute('floorWorkflow', { taskQueue, workflowId, args: [o.turns, shape] });
        if (starts.length !== o.turns) throw new Error(`floor run made ${starts.length} of ${o.turns} turns`);
        if (run < 0) continue;
        gaps.push(...starts.slice(1).map((t, i) => t - starts[i]!));
        const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
        phases.push(phaseSamples(history.events ?? [], []));
      }
    });
  } finally {
    await clientConnection.close();
    await connection.close();
  }
  return { gaps, phases: mergeSamples(phases) };
}
