/**
 * `npm run bench:peer`: forkflow side by side with Temporal's own `@temporalio/ai-sdk`, in
 * one run, on one dev server, against one offline model, under one Node (24: the peer needs
 * >= 22.12; scripts/bench-peer.mjs installs it and starts this file with it).
 *
 * The task, for both: an agent reads a distinct ~2 KB file each turn for TURNS turns (a Read
 * tool), then SIBLINGS sub-agents each start from the resulting conversation with a directive
 * of their own. forkflow: `fork` then `forkMany` by reference. The peer (bench/peer/, its own
 * lockfile): `generateText` in a workflow, sub-agents as child workflows handed the
 * conversation. Both are measured from outside in the same way: histories over raw gRPC, the
 * model's own request log for turn overhead, cache reads and tokens.
 *
 * Environment: BENCH_PEER_TURNS (default 50), BENCH_PEER_SIBLINGS (default 8),
 * BENCH_PEER_OUT (the JSON file; default bench/results/peer.json), BENCH_PEER_LOG_DIR (when set,
 * each system's model requests as JSONL there).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startBenchStack } from './kit';
import { compareRow, measureSystem, type SystemFigures } from './peer-measure';

const TURNS = Number(process.env.BENCH_PEER_TURNS ?? 50);
const SIBLINGS = Number(process.env.BENCH_PEER_SIBLINGS ?? 8);
const OUT = process.env.BENCH_PEER_OUT ?? join(__dirname, 'results', 'peer.json');
const PEER_DIR = join(__dirname, 'peer');

export interface PeerReport {
  v: 1;
  node: string;
  turns: number;
  siblings: number;
  forkflow: SystemFigures;
  peer: SystemFigures;
}

/** ~2 KB of text that no other file shares (the model must not see the same bytes twice). */
function fileText(i: number): string {
  const lines = Array.from({ length: 28 }, (_, l) => `file ${i} line ${l + 1}: ${`the quick brown fox ${i * 31 + l} `.repeat(2)}`);
  return `${lines.join('\n')}\n`;
}

const fileName = (i: number) => `files/f${String(i + 1).padStart(2, '0')}.txt`;

/** The scripted model reads the latest user text: one `@tool Read` step per turn, then a reply. */
function agentPrompt(): string {
  const reads = Array.from({ length: TURNS }, (_, i) => `@tool Read ${JSON.stringify({ file_path: fileName(i) })}`);
  return [`Read the ${TURNS} files under files/, one a turn.`, ...reads, `@reply read ${TURNS} files`].join('\n');
}

/** One system prompt and one Read tool for both, so the model sees the same prefix sizes. */
const SYSTEM = 'You read the files you are asked to read.';
const READ_TOOL = {
  name: 'Read',
  description: 'Reads a file of the workspace and returns its text.',
  input_schema: {
    type: 'object' as const,
    properties: { file_path: { type: 'string', description: 'Path relative to the workspace' } },
    required: ['file_path'],
    additionalProperties: false,
  },
};

const siblingPrompt = (i: number) => `Sibling ${i}: report on ${fileName(i % TURNS)}.\n@reply sibling ${i} done`;

async function runPeer(config: object): Promise<{ wallMs: number; siblingIds: string[]; steps: number }> {
  const child = spawn(process.execPath, [join(PEER_DIR, 'src', 'run.ts'), JSON.stringify(config)], { cwd: PEER_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the peer exited ${code}: ${out}`);
  return JSON.parse(out.trim().split('\n').pop()!) as { wallMs: number; siblingIds: string[]; steps: number };
}

export async function runBenchPeer(): Promise<PeerReport> {
  const bench = await startBenchStack('peer');
  const { client, model, workspace } = bench;
  try {
    mkdirSync(join(workspace, 'files'));
    for (let i = 0; i < TURNS; i++) writeFileSync(join(workspace, fileName(i)), fileText(i));
    const run = Date.now().toString(36);
    const siblings = Array.from({ length: SIBLINGS }, (_, i) => siblingPrompt(i));
    const temporal = client.temporal;

    // forkflow: a fork, then its siblings by reference to its conversation.
    model.log.clear();
    const parentId = `bench-peer-forkflow-${run}`;
    const budget = { maxTokens: 100_000_000 };
    const t0 = Date.now();
    await client.fork({ agentId: parentId, system: SYSTEM, tools: [READ_TOOL], prompt: agentPrompt(), maxTurns: TURNS + 5, budget }, { mode: 'sync' });
    const handles = await client.forkMany(
      { agentId: parentId },
      siblings.map((prompt, i) => ({ agentId: `${parentId}-sibling-${i}`, parentAgentId: parentId, prompt, budget })),
    );
    await Promise.all(handles.map((h) => h.result()));
    const forkflowWall = Date.now() - t0;
    const forkflowLog = model.log.entries();

    // The peer: its own worker process, same server, same model.
    model.log.clear();
    const peerId = `bench-peer-aisdk-${run}`;
    const peerRun = await runPeer({
      address: bench.stack.server.address,
      namespace: bench.stack.server.namespace,
      modelUrl: model.url,
      workspace,
      workflowId: peerId,
      system: SYSTEM,
      prompt: agentPrompt(),
      maxSteps: TURNS + 5,
      siblings,
    });
    const peerLog = model.log.entries();

    // The model's view of both runs, for a look at what each system sent.
    if (process.env.BENCH_PEER_LOG_DIR) {
      mkdirSync(process.env.BENCH_PEER_LOG_DIR, { recursive: true });
      for (const [name, log] of [['forkflow', forkflowLog], ['peer', peerLog]] as const) {
        writeFileSync(join(process.env.BENCH_PEER_LOG_DIR, `${name}.jsonl`), log.map((e) => JSON.stringify({ seq: e.seq, receivedAt: e.receivedAt, endedAt: e.endedAt, usage: e.usage, body: e.body })).join('\n'));
      }
    }
    const forkflow = await measureSystem(temporal, { parentId, siblingIds: handles.map((h) => h.agentId), log: forkflowLog, wallMs: forkflowWall, siblings });
    const peer = await measureSystem(temporal, { parentId: peerId, siblingIds: peerRun.siblingIds, log: peerLog, wallMs: peerRun.wallMs, siblings });
    return { v: 1, node: process.version, turns: TURNS, siblings: SIBLINGS, forkflow, peer };
  } finally {
    await bench.stop();
  }
}

function printReport(r: PeerReport): void {
  const rows = compareRow(r.forkflow, r.peer);
  const w0 = Math.max(...rows.map((x) => x[0].length));
  const w1 = Math.max(...rows.map((x) => x[1].length), 'forkflow'.length);
  const title = `bench:peer — ${r.turns} Read turns + ${r.siblings} siblings, Node ${r.node}, offline model (no latency)`;
  process.stdout.write(`\n${title}\n${'─'.repeat(title.length)}\n`);
  process.stdout.write(`${''.padEnd(w0)}  ${'forkflow'.padStart(w1)}  @temporalio/ai-sdk 1.23.0\n`);
  for (const [k, a, b] of rows) process.stdout.write(`${k.padEnd(w0)}  ${a.padStart(w1)}  ${b}\n`);
}

if (require.main === module) {
  runBenchPeer()
    .then((report) => {
      printReport(report);
      mkdirSync(dirname(OUT), { recursive: true });
      writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
      process.stdout.write(`\nwritten: ${OUT}\n`);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
