/**
 * Replay fixtures: tests that exercise a workflow path call `recordHistory` at the end;
 * with FORKFLOW_RECORD_HISTORIES=1 (`npm run fixtures:record`) the run's history is written
 * to test/fixtures/histories/ — as `temporal workflow show --output json` prints it — where
 * the replay test picks it up. Committed fixtures are how a change to workflow code proves
 * it still replays what older code wrote.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { testEnv } from './env';
import { runTemporal } from './processes';

export const HISTORY_FIXTURES = join(__dirname, '..', 'fixtures', 'histories');
export const CARRIED_STATE_FIXTURES = join(__dirname, '..', 'fixtures', 'carried-state');

/**
 * Recordings go to the folder of the current workflow-code generation; older generations
 * stay and keep being replayed. Start a new generation when workflow code changes shape
 * (behind `patched()`), so both the old and the new path stay covered.
 */
export const CURRENT_GENERATION = 'v3-tree-ledger';

/** Records the latest run of `handle`'s workflow, or run `opts.runId`; on the test server unless `opts.server`. */
export async function recordHistory(handle: WorkflowHandle, name: string, opts: { runId?: string; server?: { address: string; namespace: string } } = {}): Promise<void> {
  if (process.env.FORKFLOW_RECORD_HISTORIES !== '1') return;
  const { address, namespace } = opts.server ?? testEnv();
  const run = opts.runId;
  const shown = await runTemporal(['workflow', 'show', '-w', handle.workflowId, ...(run ? ['-r', run] : []), '--output', 'json', '--address', address, '--namespace', namespace]);
  if (shown.status !== 0) throw new Error(`temporal workflow show failed: ${shown.stderr}`);
  const dir = join(HISTORY_FIXTURES, CURRENT_GENERATION);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), shown.stdout);
}

/** Records a carried state a run was started with (test/fixtures/carried-state/, see its README). */
export function recordCarriedState(state: unknown, name: string): void {
  if (process.env.FORKFLOW_RECORD_HISTORIES !== '1') return;
  writeFileSync(join(CARRIED_STATE_FIXTURES, `${name}.json`), `${JSON.stringify(state, null, 2)}\n`);
}

/** The input a run was started with (the first argument of its workflow function). */
export async function startInputOf<T = Record<string, unknown>>(handle: WorkflowHandle): Promise<T> {
  const [first] = (await handle.fetchHistory()).events ?? [];
  const payload = first?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`${handle.workflowId}: no start input in history`);
  return defaultPayloadConverter.fromPayload<T>(payload);
}
