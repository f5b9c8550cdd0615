/** Shared pieces of the benchmarks: a dev server + worker + offline model, and statistics. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperatorConsent } from '../src/activities/consent';
import type { ConversationSource } from '../src/activities/conversation';
import type { ForkflowClient } from '../src/client';
import type { OfflineModel } from '../src/offline';
import { startDevStack, type DevStack } from '../src/testing/dev-stack';
import { messageRequests } from '../test/kit/requests';

export interface BenchStack {
  client: ForkflowClient;
  conversations: ConversationSource;
  model: OfflineModel;
  workspace: string;
  stack: DevStack;
  stop(): Promise<void>;
}

/** `consent`: what the bench's worker allows start inputs to make it run (a stdio MCP server's command). */
export async function startBenchStack(name: string, opts: { consent?: (workspace: string) => OperatorConsent } = {}): Promise<BenchStack> {
  const workspace = mkdtempSync(join(tmpdir(), `forkflow-bench-${name}-`));
  const stack = await startDevStack({ workspaceRoot: workspace, server: { headless: true, logLevel: 'error' }, offlineModel: { latencyMs: 0 }, logLevel: 'ERROR', ...(opts.consent ? { consent: opts.consent(workspace) } : {}) });
  return { client: stack.client, conversations: stack.conversations, model: stack.offlineModel!, workspace, stack, stop: () => stack.stop() };
}

/** Gaps between consecutive model requests (one full turn each), in ms. */
export function turnGaps(model: OfflineModel): number[] {
  const times = messageRequests(model).map((e) => e.receivedAt);
  return times.slice(1).map((t, i) => t - times[i]!);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

export function printTable(title: string, rows: [string, string][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`\n${title}\n${'─'.repeat(title.length)}\n`);
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(width)}  ${v}\n`);
}
