/**
 * The offline model as a process of its own (crash tests kill workers and servers around
 * it). It prints `model listening <url>` once ready, and appends every exchange that has
 * ended to the JSONL file named by its first argument: the model's own record of what it
 * served, read by the test afterwards.
 */
import { appendFileSync } from 'node:fs';
import { startOfflineModel } from '../../src/offline';

const logFile = process.argv[2];
if (!logFile) throw new Error('usage: model-process.ts <log.jsonl>');

void startOfflineModel().then((model) => {
  const written = new Set<number>();
  model.log.on('update', (entry) => {
    // Model calls on both wires: the Messages API and Chat Completions (OpenAI-compatible providers).
    if (entry.outcome === 'pending' || written.has(entry.seq) || (entry.path !== '/v1/messages' && entry.path !== '/v1/chat/completions')) return;
    written.add(entry.seq);
    appendFileSync(logFile, `${JSON.stringify({ seq: entry.seq, path: entry.path, outcome: entry.outcome, endedAt: entry.endedAt, rawBody: entry.rawBody })}\n`);
  });
  process.stdout.write(`model listening ${model.url}\n`);
  process.once('SIGTERM', () => void model.close().then(() => process.exit(0)));
});
