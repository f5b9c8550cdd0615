/**
 * History grows linearly: a 40-turn fork whose every tool result is ~20 KB stays within
 * 1.3 × (bytes of all its messages) + 4 KB per turn, and no activity input exceeds 8 KB,
 * because activity inputs reference the conversation instead of carrying it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { canonicalJson, utf8Length } from '../../src/shared/base/hash';
import { startHarness, type Harness } from '../kit/env';

let h: Harness;
beforeAll(async () => {
  // About history, not context windows: ~800 KB of reads pass no model's window here, and nothing is managed.
  h = await startHarness({ name: 'linear', model: { contextWindow: 1_000_000_000 } });
  const line = 'forkflow records every message exactly once in history.'.padEnd(63, '.');
  writeFileSync(join(h.workspaceRoot, 'big.txt'), Array.from({ length: 320 }, (_, i) => `${i} ${line}`).join('\n'));
});
afterAll(() => h.close());

test('a 40-turn fork with ~20 KB tool results: linear history, small activity inputs', async () => {
  const turns = 40;
  const prompt = `Read it over and over.\n@repeat ${turns - 1} @tool Read {"file_path":"big.txt"}\n@reply done`;
  // A long fork re-reads a growing prefix: far beyond the default 50k-token budget, on purpose.
  const result = await h.forkflow.fork({ agentId: 'linear-40', prompt, maxTurns: 50, budget: { maxTokens: 10_000_000 }, contextManagement: 'off' }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', turns, text: 'done' });

  const transcript = await h.forkflow.transcript('linear-40');
  const messageBytes = transcript.reduce((n, m) => n + utf8Length(canonicalJson(m)), 0);
  const toolResultBytes = utf8Length(canonicalJson(transcript[2]));
  expect(toolResultBytes).toBeGreaterThan(20_000);

  const handle = h.client.workflow.getHandle('linear-40');
  const history = await handle.fetchHistory();
  const historyBytes = temporal.api.history.v1.History.encode(history).finish().length;
  const bound = 1.3 * messageBytes + 4096 * turns;

  const inputs = (history.events ?? [])
    .filter((e) => e.activityTaskScheduledEventAttributes)
    .map((e) => (e.activityTaskScheduledEventAttributes!.input?.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0) + (p.metadata ? 64 : 0), 0));
  const largestInput = Math.max(...inputs);

  console.log(
    `linear history: ${turns} turns, messages ${messageBytes} B, history ${historyBytes} B ` +
      `(${(historyBytes / messageBytes).toFixed(3)}× messages, ${Math.round((historyBytes - messageBytes) / turns)} B/turn overhead), ` +
      `bound ${Math.round(bound)} B, ${inputs.length} model activities, largest input ${largestInput} B`,
  );
  expect(historyBytes).toBeLessThanOrEqual(bound);
  // Model calls are activities; the reads ran as local activities, recorded once as markers.
  const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
  expect(inputs.length).toBe(turns);
  expect(markers.length).toBe(turns - 1);
  expect(largestInput).toBeLessThanOrEqual(8 * 1024);
});
