/**
 * `node -r tsx/cjs bench/limits.ts`: what refusing hostile inputs costs, and what the inbound
 * guard adds to honest ones (src/shared/wire/limits.ts, src/payloads/inbound.ts).
 *
 * - Refusals: `validateForkInput` on a 5,000-level nesting in a tool schema, on a 1,000,000-level
 *   one, on a 50 MB prompt, and on 33 MB of messages: each should be far under a second.
 * - The guard on honest activations: a signal (a 2 KB message) and start inputs of 100 KB and
 *   5 MB (an inline parent), plain and encrypted — it decodes them once, and the SDK then passes
 *   them through, so the cost over no guard is about one JSON parse (the validity check).
 */
import { randomBytes } from 'node:crypto';
import { defaultFailureConverter, defaultPayloadConverter, type LoadedDataConverter, type Payload } from '@temporalio/common';
import { coresdk } from '@temporalio/proto';
import { EncryptionCodec } from '../src/payloads/codec';
import { guardActivation } from '../src/payloads/inbound';
import { validateForkInput } from '../src/shared/wire/fork-input-validation';
import { median, percentile, printTable } from './kit';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);

function timeSync(fn: () => unknown): number[] {
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint();
    fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

const ms = (xs: number[]) => `${median(xs).toFixed(3)} ms median, p95 ${percentile(xs, 95).toFixed(3)} ms`;
const nested = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`) as unknown;

async function main(): Promise<void> {
  const tool = (schema: unknown) => ({ name: 'deep', input_schema: { type: 'object', properties: { p: schema } } });
  const deep5k = { prompt: 'go', tools: [tool(nested(5000))] };
  const deep1m = { prompt: 'go', tools: [tool(nested(1_000_000))] };
  const prompt50mb = { prompt: 'p'.repeat(50 * 1024 * 1024) };
  const big = { prompt: 'go', parent: { system: 's', tools: [], model: 'm', messages: Array.from({ length: 33 }, () => ({ role: 'user', content: 'y'.repeat(1024 * 1024) })) } };
  for (const input of [deep5k, deep1m, prompt50mb, big]) if (validateForkInput(input).ok) throw new Error('a hostile input passed validation');
  printTable('Refusing hostile fork inputs (validateForkInput)', [
    ['nested 5,000 deep', ms(timeSync(() => validateForkInput(deep5k)))],
    ['nested 1,000,000 deep', ms(timeSync(() => validateForkInput(deep1m)))],
    ['a 50 MB prompt', ms(timeSync(() => validateForkInput(prompt50mb)))],
    ['33 MB of messages', ms(timeSync(() => validateForkInput(big)))],
  ]);

  const codec = new EncryptionCodec({ keys: [{ id: 'k1', key: randomBytes(32) }] });
  const dc = (codecs: EncryptionCodec[]): LoadedDataConverter => ({ payloadConverter: defaultPayloadConverter, failureConverter: defaultFailureConverter, payloadCodecs: codecs });
  const text = (n: number) => 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(Math.ceil(n / 57)).slice(0, n);
  const start = (bytes: number) => ({ prompt: 'go', parent: { system: 's', tools: [], model: 'm', messages: Array.from({ length: Math.max(1, Math.round(bytes / 4000)) }, () => ({ role: 'user', content: text(4000) })) } });
  const shapes: [string, unknown, 'signal' | 'start'][] = [
    ['a 2 KB sendMessage signal', { message: text(2000), from: 'ops' }, 'signal'],
    ['a 100 KB start input', start(100_000), 'start'],
    ['a 5 MB start input', start(5_000_000), 'start'],
  ];
  const rows: [string, string][] = [];
  for (const [what, value, kind] of shapes) {
    for (const encrypted of [false, true]) {
      const plain = defaultPayloadConverter.toPayload(value);
      const payload: Payload = encrypted ? (await codec.encode([plain]))[0]! : plain;
      const activation = () =>
        coresdk.workflow_activation.WorkflowActivation.create({
          runId: 'r',
          jobs: [kind === 'signal' ? { signalWorkflow: { signalName: 'sendMessage', input: [payload] } } : { initializeWorkflow: { workflowType: 'forkWorkflow', arguments: [payload] } }],
        });
      const converter = dc(encrypted ? [codec] : []);
      rows.push([`${what}${encrypted ? ', encrypted' : ''}`, ms(await timeAsync(() => guardActivation(activation(), converter)))]);
    }
  }
  printTable('The inbound guard on honest activations (decode + validity check; the SDK then passes them through)', rows);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
