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
import { testEnv } from './env';
import { runTemporal } from './processes';

export const HISTORY_FIXTURES = join(__dirname, '..', 'fixtures', 'histories');

/**
 * Recordings go to the folder of the current workflow-code generation; older generations
 * stay and keep being replayed. Start a new generation when workflow code changes shape
 * (behind `patched()`), so both the old and the new path stay covered.
 */
export const CURRENT_GENERATION = 'v2-local-read-tools';

export async function recordHistory(handle: WorkflowHandle, name: string): Promise<void> {
  if (process.env.FORKFLOW_RECORD_HISTORIES !== '1') return;
  const env = testEnv();
  const shown = await runTemporal(['workflow', 'show', '-w', handle.workflowId, '--output', 'json', '--address', env.address, '--namespace', env.namespace]);
  if (shown.status !== 0) throw new Error(`temporal workflow show failed: ${shown.stderr}`);
  const dir = join(HISTORY_FIXTURES, CURRENT_GENERATION);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), shown.stdout);
}
