/**
 * `npm run bench:codec`: what payload encryption costs per turn. A turn moves four payloads
 * through Temporal: the model activity's input (a reference, ~400 B), its result (the
 * assistant message), a tool activity's input and the tool's result. Each is encoded once by
 * its sender and decoded once by its receiver; this times exactly that, through the real
 * default payload converter and the AES-256-GCM codec. Two turn shapes: a typical one (20 KB file read) and a heavy one (1 MB tool result,
 * e.g. an image). Prints the codec's median and p95 per turn, its throughput,
 * and the JSON conversion the SDK does anyway, for scale.
 */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { EncryptionCodec } from '../src/payloads/codec';
import { median, percentile, printTable } from './kit';

const TURNS = Number(process.env.BENCH_TURNS ?? 2000);

function turn(toolResultBytes: number): unknown[] {
  const text = (n: number) => 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(Math.ceil(n / 57)).slice(0, n);
  return [
    { conversation: { workflowId: 'fork-callers-1a2b3c4d', runId: '01a20b78-5bbb-78ea-9000-000000000000', count: 42, digest: 'f'.repeat(64) }, turn: 21, model: 'claude-sonnet-5-5' },
    { role: 'assistant', content: [{ type: 'text', text: text(1500) }, { type: 'tool_use', id: 'toolu_0123456789', name: 'Read', input: { file_path: '/srv/repo/src/config.ts' } }], usage: { inputTokens: 1200, outputTokens: 400 } },
    { name: 'Read', input: { file_path: '/srv/repo/src/config.ts' }, toolUseId: 'toolu_0123456789', turn: 21 },
    { toolUseId: 'toolu_0123456789', content: text(toolResultBytes), isError: false },
  ];
}

/**
 * One turn's payload traffic: every payload converted and encoded by its sender, decoded and
 * converted back by its receiver. The codec's share is timed on its own (a difference of two
 * noisy totals would drown it), with the JSON conversion around it for scale.
 */
async function roundTrip(values: unknown[], codec: PayloadCodec): Promise<{ codec: number; convert: number }> {
  const t0 = process.hrtime.bigint();
  const payloads: Payload[] = values.map((v) => defaultPayloadConverter.toPayload(v));
  const t1 = process.hrtime.bigint();
  const decoded = await codec.decode(await codec.encode(payloads));
  const t2 = process.hrtime.bigint();
  for (const p of decoded) defaultPayloadConverter.fromPayload(p);
  const t3 = process.hrtime.bigint();
  return { codec: Number(t2 - t1) / 1e6, convert: Number(t1 - t0 + (t3 - t2)) / 1e6 };
}

async function measure(label: string, toolResultBytes: number, codec: PayloadCodec): Promise<[string, string][]> {
  const values = turn(toolResultBytes);
  const bytes = values.reduce<number>((n, v) => n + (defaultPayloadConverter.toPayload(v).data?.length ?? 0), 0);
  const turns = toolResultBytes > 100_000 ? Math.max(50, Math.floor(TURNS / 20)) : TURNS;
  for (let i = 0; i < 50; i++) await roundTrip(values, codec); // warm-up
  const codecMs: number[] = [];
  const convertMs: number[] = [];
  for (let i = 0; i < turns; i++) {
    const t = await roundTrip(values, codec);
    codecMs.push(t.codec);
    convertMs.push(t.convert);
  }
  const ms = (v: number) => `${v.toFixed(3)} ms`;
  return [
    [`${label}: payload bytes per turn`, `${(bytes / 1024).toFixed(1)} KiB in 4 payloads`],
    [`${label}: encrypt + decrypt per turn (median / p95)`, `${ms(median(codecMs))} / ${ms(percentile(codecMs, 95))} (${((2 * bytes) / 1e6 / (median(codecMs) / 1000)).toFixed(0)} MB/s)`],
    [`${label}: JSON conversion per turn, for scale (median)`, ms(median(convertMs))],
  ];
}

async function main(): Promise<void> {
  const codec = new EncryptionCodec({ keys: [{ id: 'bench', key: randomBytes(32) }] });
  const rows = [...(await measure('typical turn (20 KB tool result)', 20_000, codec)), ...(await measure('heavy turn (1 MB tool result)', 1_000_000, codec))];
  printTable(`payload encryption, AES-256-GCM, ${TURNS} turns (node ${process.version})`, rows);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
