/**
 * What a parent sees of its sub-agents' output. Their output files (seed 001's `outputFile`;
 * src/shared/tree/agent-output.ts): the path
 * `async_launched`, `remote_launched` and a background child's notification carry, and the
 * `Read` of such a path, which this workflow answers itself: for one of its own children, from
 * the child's workflow (a query, by a local activity: durable, on any worker); for anything
 * else under the output root, a refusal. No file is read from disk, so no other agent, tree or
 * tenant can read a child's output through that path. And the totals a finished child's
 * outcome view carries (seed 001's `completed`: `totalTokens`; not its wall-time duration, see outcomeTotals).
 */
import { ActivityFailure, isCancellation, patched } from '@temporalio/workflow';
import { totalTokens, type ToolResultBlock, type ToolUseBlock } from '../../shared/messages-api/anthropic';
import { agentOutputFile, AGENT_OUTPUT_ROOT, isAgentOutputPath } from '../../shared/tree/agent-output';
import type { ChildOutcome, ChildRecord } from '../../shared/tree/tree-input';
import { agentOutput } from '../activities';
import type { ForkAgent } from './agent';
import { errorResult, okResult } from './tool-results';

/**
 * Before this patch sub-agents had no output file: `async_launched`, `remote_launched` and
 * notifications did not name one, and a Read of such a path went to the disk. Those results
 * are in recorded conversations, so recorded runs keep their bytes.
 */
export const AGENT_OUTPUT_PATCH = 'forkflow-agent-output-file-1';

/** `{ outputFile }` for a child's notification, under the patch. */
export function outputFileOf(record: ChildRecord): { outputFile?: string } {
  return patched(AGENT_OUTPUT_PATCH) ? { outputFile: agentOutputFile(record.agentId) } : {};
}

/** The fields `async_launched` gains under the patch (seed 001: `outputFile`, `canReadOutputFile`). */
export function launchedOutputFields(agent: ForkAgent, record: ChildRecord): { outputFile?: string; canReadOutputFile?: boolean } {
  if (!patched(AGENT_OUTPUT_PATCH)) return {};
  return { outputFile: agentOutputFile(record.agentId), canReadOutputFile: agent.summary.toolNames.includes('Read') };
}

/** Before this patch a finished child's outcome had no `totalTokens` (seed 001's `completed` has it). */
export const OUTCOME_TOTALS_PATCH = 'forkflow-outcome-totals-1';

/**
 * Seed 001's token total for a finished child's outcome view (its subtree's), under the patch.
 * Not its `totalDurationMs`: wall time in a tool result makes the parent's next requests
 * differ between two runs of the same agent (a reference and a continued run, a time-travel
 * replay, an eval), by a token the rest of the conversation then carries; CI's continue-as-new
 * comparison caught it. The duration is in `status`, the result and ListAgents.
 */
export function outcomeTotals(o: ChildOutcome): { totalTokens?: number } {
  if (!patched(OUTCOME_TOTALS_PATCH)) return {};
  return { totalTokens: totalTokens(o.treeUsage) };
}

const filePathOf = (input: unknown): string | undefined =>
  input !== null && typeof input === 'object' && typeof (input as { file_path?: unknown }).file_path === 'string' ? (input as { file_path: string }).file_path : undefined;

/** Whether this Read names a path under the output root (asked only then: other Reads carry no marker). */
export function readsAgentOutput(input: unknown): boolean {
  const path = filePathOf(input);
  return path !== undefined && isAgentOutputPath(path) && patched(AGENT_OUTPUT_PATCH);
}

/** The child of this agent whose output file `path` is (spelled exactly, or with `//`, `/./`). */
function childOf(agent: ForkAgent, path: string): ChildRecord | undefined {
  const plain = path.replace(/\/(\.\/)+/g, '/').replace(/\/{2,}/g, '/');
  return agent.children.all.find((c) => agentOutputFile(c.agentId) === plain);
}

/** Answers a Read (its input `given`) under the output root (`readsAgentOutput` said so): the child's output so far, or a refusal. */
export async function readAgentOutput(agent: ForkAgent, use: ToolUseBlock, given: unknown): Promise<ToolResultBlock> {
  const path = filePathOf(given)!;
  const record = childOf(agent, path);
  if (!record) {
    return errorResult(use.id, `Denied: ${path} is not the output file of a sub-agent of yours; only the agent that started a sub-agent can Read its output file (paths under ${AGENT_OUTPUT_ROOT} are not files on disk).`);
  }
  agent.doing(`reading the output of ${record.agentId}`);
  const recorded = record.result ? { recorded: { status: record.result.status, text: record.result.text } } : {};
  try {
    const r = await agentOutput.readAgentOutput({ agentId: record.agentId, ...recorded });
    if (!r.found) return errorResult(use.id, `The output of ${record.agentId} is no longer available (its history is gone). TaskOutput with task_id "${record.agentId}" shows what was recorded.`);
    return okResult(use.id, r.text);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const why = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    return errorResult(use.id, `The output of ${record.agentId} could not be read just now (${why}); try again, or use TaskOutput with task_id "${record.agentId}".`);
  }
}
