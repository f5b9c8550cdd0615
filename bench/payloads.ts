/**
 * `npm run bench:payloads`: what external payload storage (src/payloads) costs and saves,
 * on a dev server with the filesystem driver in a fresh temp folder and the SDK's default
 * threshold (256 KiB):
 *
 * - bytes in history per MB of conversation, for a fork whose conversation grows to ~8 MB
 *   (a 1 MB file read over and over);
 * - blob bytes written per sibling fork, for 4 siblings started from one 4 MB inline parent
 *   (each start carries the parent; the shared part is stored once) and for 4 siblings by
 *   reference (`forkMany`: the parent recorded once, each sibling holds a reference).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageParam } from '../src/shared/messages-api/anthropic';
import { canonicalJson, utf8Length } from '../src/shared/base/hash';
import { fsDriverFor, storageSettings } from '../src/payloads/storage';
import { rawHistory, referenceCount } from '../test/kit/raw-history';
import { bigSnapshot } from '../test/kit/snapshots';
import { printTable, startBenchStack } from './kit';

const MB = 1024 * 1024;
const budget = { maxTokens: 100_000_000 };
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const bytesOf = (messages: MessageParam[]) => utf8Length(canonicalJson(messages));

async function main(): Promise<void> {
  // A blob folder of this run's own, so the figures count only what this run writes.
  process.env.FORKFLOW_BLOB_DIR = mkdtempSync(join(tmpdir(), 'forkflow-bench-blobs-'));
  const settings = storageSettings();
  if (settings.kind !== 'fs') throw new Error('bench:payloads measures the fs driver: unset FORKFLOW_STORAGE');
  const driver = fsDriverFor(settings.dir);
  const bench = await startBenchStack('payloads');
  const { client, workspace } = bench;
  const temporal = bench.stack.client.temporal;
  const rows: [string, string][] = [];
  try {
    // 1. History per MB of conversation.
    const line = 'external storage keeps history small whatever the conversation holds. '.repeat(14);
    writeFileSync(join(workspace, 'big.txt'), Array.from({ length: 1000 }, (_, i) => `${i} ${line}`).join('\n'));
    const reads = 8;
    const prompt = `Read it again and again.\n@repeat ${reads} @tool Read {"file_path":"big.txt","offset":1,"limit":1000}\n@reply done`;
    await client.fork({ agentId: 'bench-payloads-grow', prompt, maxTurns: 20, budget }, { mode: 'sync' });
    const transcript = await client.transcript('bench-payloads-grow');
    const history = await rawHistory(temporal, 'bench-payloads-grow');
    const conversation = bytesOf(transcript);
    rows.push(['conversation (grown by Read)', `${fmt(conversation)} B (${(conversation / MB).toFixed(1)} MB, ${transcript.length} messages)`]);
    rows.push(['history (as the server stores it)', `${fmt(history.bytes)} B, ${referenceCount(history)} references`]);
    rows.push(['history bytes per MB of conversation', `${fmt(history.bytes / (conversation / MB))} B`]);

    // 2. Siblings from one inline parent: each start carries the parent.
    const parent = bigSnapshot({ conversationBytes: 4_000_000, pendingToolUses: 1 });
    parent.system = `${typeof parent.system === 'string' ? parent.system : ''}\nbench ${Date.now()}`;
    const inlineWrites: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = driver.stats.bytesWritten;
      await client.fork({ agentId: `bench-payloads-inline-${i}`, parent, prompt: `Inline sibling ${i}.\n@reply ok`, budget }, { mode: 'sync' });
      inlineWrites.push(driver.stats.bytesWritten - before);
    }
    rows.push(['inline parent', `${fmt(bytesOf(parent.messages))} B of messages`]);
    rows.push(['blob bytes written, inline siblings 1..4', inlineWrites.map(fmt).join(' / ')]);

    // 3. Siblings by reference: the parent recorded once.
    const refParent = bigSnapshot({ conversationBytes: 4_000_000, pendingToolUses: 4 });
    refParent.system = `${typeof refParent.system === 'string' ? refParent.system : ''}\nbench-ref ${Date.now()}`;
    const beforeSnapshot = driver.stats.bytesWritten;
    const ref = await client.recordSnapshot(refParent);
    const snapshotWrite = driver.stats.bytesWritten - beforeSnapshot;
    const refWrites: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = driver.stats.bytesWritten;
      const handle = await client.start({ agentId: `bench-payloads-ref-${i}`, parentRef: ref, prompt: `Reference sibling ${i}.\n@reply ok`, budget });
      await handle.result();
      refWrites.push(driver.stats.bytesWritten - before);
    }
    rows.push(['blob bytes written, recording the snapshot', fmt(snapshotWrite)]);
    rows.push(['blob bytes written, by-reference siblings 1..4', refWrites.map(fmt).join(' / ')]);
    rows.push(['blob folder in total', `${fmt(driver.stats.bytesWritten)} B in ${driver.stats.blobsWritten} blobs (${fmt(driver.stats.bytesReused)} B found already stored)`]);
  } finally {
    await bench.stop();
  }
  printTable('External payload storage (fs driver, 256 KiB threshold)', rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
