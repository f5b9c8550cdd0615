/**
 * Big inputs are refused by the client before anything is stored or sent: a 50 MB prompt, a
 * snapshot nested 5,000 deep, a 33 MB snapshot. The client's converter stores large payloads
 * in a blob folder (external storage) and its connection points at a closed port: a refusal
 * that came late would write blobs or reach for the server; neither happens, and the error
 * names the limit.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ForkflowClient, InvalidForkInputError } from '../../../src/client';
import { forkflowDataConverter } from '../../../src/payloads/data-converter';
import { fsDriverFor } from '../../../src/payloads/storage';
import { MAX_PROMPT_CHARS } from '../../../src/shared/wire/limits';
import { forkflowConnectionOptions } from '../../../src/client/connection-options';

const blobs = mkdtempSync(join(tmpdir(), 'forkflow-limits-'));
let connection: Connection;
let forkflow: ForkflowClient;
beforeAll(() => {
  // Nothing listens on port 1: a request that got past the client's checks would fail, not pass.
  connection = Connection.lazy(forkflowConnectionOptions({ address: '127.0.0.1:1' }));
  const dataConverter = forkflowDataConverter({ env: { FORKFLOW_BLOB_DIR: blobs, FORKFLOW_STORAGE_THRESHOLD: '1024' } });
  forkflow = new ForkflowClient(new Client({ connection, dataConverter }), { outage: { deadlineMs: 0 } });
});
afterAll(() => connection?.close());

const snapshot = (messages: unknown[]) => ({ system: 'sys', tools: [], model: 'claude-sonnet-4-6', messages }) as never;

test('a 50 MB prompt is refused by the client, naming the limit, before any upload', async () => {
  const started = forkflow.start({ agentId: 'huge', prompt: 'p'.repeat(50 * 1024 * 1024) });
  await expect(started).rejects.toThrow(InvalidForkInputError);
  await expect(started).rejects.toThrow(`prompt: longer than ${MAX_PROMPT_CHARS.toLocaleString('en-US')} characters (MAX_PROMPT_CHARS)`);
  expect(readdirSync(blobs)).toEqual([]);
  expect(fsDriverFor(blobs).stats.blobsWritten).toBe(0);
});

test('snapshots too deep or too large are refused before they are recorded', async () => {
  const deep = JSON.parse(`${'['.repeat(5000)}${']'.repeat(5000)}`) as unknown;
  await expect(forkflow.recordSnapshot(snapshot([{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input: deep }] }]))).rejects.toThrow(/MAX_JSON_DEPTH/);
  const large = Array.from({ length: 33 }, () => ({ role: 'user', content: 'y'.repeat(1024 * 1024) }));
  await expect(forkflow.recordSnapshot(snapshot(large))).rejects.toThrow(/MAX_INPUT_CHARS/);
  await expect(forkflow.start({ agentId: 'deep', prompt: 'go', parent: snapshot([{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input: deep }] }]) })).rejects.toThrow(/MAX_JSON_DEPTH/);
  expect(readdirSync(blobs)).toEqual([]);
});
