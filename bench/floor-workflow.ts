/**
 * The floor a durable turn is compared with (bench/floor.ts): the same shape as a fork's turn
 * (a model call as an activity, then a short tool as a local activity), with no work in it.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

export interface FloorActivities {
  /** Stands for the model call: answers at once with a reply-sized string. */
  floorModel(turn: number): Promise<string>;
  /** Stands for the Read: a local activity that answers at once. */
  floorTool(turn: number): Promise<string>;
}

const remote = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export async function floorWorkflow(turns: number): Promise<number> {
  let chars = 0;
  for (let turn = 0; turn < turns; turn++) {
    chars += (await remote.floorModel(turn)).length;
    if (turn < turns - 1) chars += (await local.floorTool(turn)).length;
  }
  return chars;
}
