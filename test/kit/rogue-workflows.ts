/**
 * The workflow a rogue worker runs on a queue of its own (test/kit/rogue-worker.ts): it
 * schedules forkflow's `runTool` on the victim's queue with an input of the rogue's choosing,
 * as any process with access to the namespace could. Bundled by the rogue worker only.
 */
import { proxyActivities } from '@temporalio/workflow';

interface RunTool {
  runTool(input: unknown): Promise<{ content: string; isError: boolean }>;
}

/** Runs forkflow's `runTool` on `queue` with `input`; returns its result, or the failure's message. */
export async function rogueRunTool(queue: string, input: unknown): Promise<string> {
  const { runTool } = proxyActivities<RunTool>({ taskQueue: queue, startToCloseTimeout: '30s', retry: { maximumAttempts: 1 } });
  try {
    return `ran: ${JSON.stringify(await runTool(input))}`;
  } catch (err) {
    return `failed: ${String((err as { cause?: unknown }).cause ?? err)}`;
  }
}
