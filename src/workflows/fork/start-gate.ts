/**
 * How many child starts one workflow task carries. An agent whose turn starts many agents at
 * once (a thousand Agent calls in one response) would put every StartChildWorkflowExecution
 * command, each with its input, summary and details, in one task completion; past the
 * server's 4 MB gRPC message limit that completion is refused (GrpcMessageTooLarge) and the
 * agent fails. The gate lets a start through while fewer than STARTS_MAX starts and
 * START_BYTES_MAX bytes of them are waiting for their started event, so each task carries at
 * most that much; the rest go as the earlier ones are started (a task or two later). One
 * start always goes, however large.
 *
 * Runs started before the gate (patch START_GATE_PATCH) start all at once, as they did.
 */
import { condition, patched } from '@temporalio/workflow';

export const START_GATE_PATCH = 'forkflow-start-gate-1';
/** Starts waiting for their started event, at most. */
export const STARTS_MAX = 100;
/** Their commands' estimated bytes, at most: half the server's message limit, the rest for the task's other commands. */
export const START_BYTES_MAX = 2 * 1024 * 1024;

interface InFlight {
  starts: number;
  bytes: number;
}
const gates = new WeakMap<object, InFlight>();

/**
 * Runs `start` (a child start that resolves once the child started) when the agent's gate has
 * room for a start of about `bytes`.
 */
export async function throughStartGate<T>(agent: object, bytes: number, start: () => Promise<T>): Promise<T> {
  if (!patched(START_GATE_PATCH)) return start();
  let g = gates.get(agent);
  if (!g) gates.set(agent, (g = { starts: 0, bytes: 0 }));
  const gate = g;
  const room = () => gate.starts === 0 || (gate.starts < STARTS_MAX && gate.bytes + bytes <= START_BYTES_MAX);
  // Checked and taken in one step: waiters released together each check again before taking.
  while (!room()) await condition(room);
  gate.starts += 1;
  gate.bytes += bytes;
  try {
    return await start();
  } finally {
    gate.starts -= 1;
    gate.bytes -= bytes;
  }
}
