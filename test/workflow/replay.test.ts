/**
 * Determinism guard: every committed history under test/fixtures/histories/ must replay
 * against the current workflow code. A failure here means a change to src/workflows would
 * break forks already running in production: version it with `patched()` instead.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { InboundGuardWorker } from '../../src/worker/inbound-guard-worker';
import { testEnv } from '../kit/env';
import { HISTORY_FIXTURES } from '../kit/histories';

const files = readdirSync(HISTORY_FIXTURES, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();

test('history fixtures exist for the main workflow paths, in every generation', () => {
  const generations = new Set(files.map((f) => f.split('/')[0]));
  expect(generations.size).toBeGreaterThanOrEqual(2);
  for (const g of generations) expect(files.filter((f) => f.startsWith(`${g}/`)).length).toBeGreaterThanOrEqual(8);
});

test('every committed history replays against the current workflow code', async () => {
  const histories = files.map((file) => ({
    workflowId: file.replace(/\.json$/, '').replace('/', ':'),
    history: historyFromJSON(JSON.parse(readFileSync(join(HISTORY_FIXTURES, file), 'utf8'))),
  }));
  const failures: string[] = [];
  // The worker forkflow runs: its inbound guard decodes start inputs and signals on replay too.
  for await (const result of InboundGuardWorker.runReplayHistories({ workflowBundle: { codePath: testEnv().bundlePath } }, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
  }
  expect(failures).toEqual([]);
  // A guard against a hang, not a speed target: 81 histories (5 MB) replay in ~20 s on a quiet
  // machine and took over 60 s under a loaded CI run.
}, 300_000);
