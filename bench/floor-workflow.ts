/**
 * The floors a durable turn is compared with (bench/floor.ts): turns with no work in them, in
 * three shapes. `fork` is a fork's own (the model call as an activity, then a short tool as a
 * local activity); `remote` is one activity a turn and nothing else, the least any turn whose
 * model call is an activity can cost; `local` makes the model call a local activity too.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

export type FloorShape = 'fork' | 'remote' | 'local';

export interface FloorActivities {
  /** Stands for the model call: answers at once with a reply-sized string. */
  floorModel(turn: number): Promise<string>;
  /** Stands for the Read: answers at once. */
  floorTool(turn: number): Promise<string>;
}

const remote = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export async function floorWorkflow(turns: number, shape: FloorShape = 'fork'): Promise<number> {
  const model = shape === 'local' ? local : remote;
  let chars = 0;
  for (let turn = 0; turn < turns; turn++) {
    chars += (await model.floorModel(turn)).length;
    if (shape !== 'remote' && turn < turns - 1) chars += (await local.floorTool(turn)).length;
  }
  return chars;
}
