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
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { startBenchStack } from './kit';
import type { RequestLogEntry } from '../src/offline';
import { compareRow, measureSystem, type SystemFigures } from './peer-measure';

const TURNS = Number(process.env.BENCH_PEER_TURNS ?? 50);
const SIBLINGS = Number(process.env.BENCH_PEER_SIBLINGS ?? 8);
const OUT = process.env.BENCH_PEER_OUT ?? join(__dirname, 'results', 'peer.json');
const PEER_DIR = join(__dirname, 'peer');

export interface PeerReport {
  v: 1;
  measuredAt: string;
  node: string;
  /** The machine's 1-minute load average when the run began: timings on a busy machine are noisy. */
  loadAverage: number;
  cpus: number;
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

/** One run of the task: its agent's prompt and its siblings' directives, told apart by `label`. */
interface Task {
  label: string;
  turns: number;
  prompt: string;
  siblings: string[];
}

/** The scripted model reads the latest user text: one `@tool Read` step per turn, then a reply. */
function task(label: string, turns: number, siblings: number): Task {
  const reads = Array.from({ length: turns }, (_, i) => `@tool Read ${JSON.stringify({ file_path: fileName(i) })}`);
  return {
    label,
    turns,
    prompt: [`Read the ${turns} files under files/, one a turn (${label}).`, ...reads, `@reply read ${turns} files`].join('\n'),
    siblings: Array.from({ length: siblings }, (_, i) => `Sibling ${i} of ${label}: report on ${fileName(i % turns)}.\n@reply sibling ${i} done`),
  };
}

/** This task's requests: each carries the agent's first prompt line (the siblings' in the conversation). */
const requestsOf = (log: RequestLogEntry[], t: Task) => log.filter((e) => e.rawBody.includes(t.prompt.split('\n')[0]!));

interface PeerRun {
  workflowId: string;
  siblingIds: string[];
  /** Date.now() in the peer's process: the same machine's clock as the model's log. */
  startedAt: number;
  wallMs: number;
}

/** The peer's worker process: runs the tasks one after another, prints one JSON line of results. */
async function runPeer(config: object): Promise<PeerRun[]> {
  const child = spawn(process.execPath, [join(PEER_DIR, 'src', 'run.ts'), JSON.stringify(config)], { cwd: PEER_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the peer exited ${code}: ${out}`);
  return JSON.parse(out.trim().split('\n').pop()!) as PeerRun[];
}

export async function runBenchPeer(): Promise<PeerReport> {
  const loadAverage = Math.round(loadavg()[0]! * 10) / 10;
  const measuredAt = new Date().toISOString();
  const bench = await startBenchStack('peer');
  const { client, model, workspace } = bench;
  try {
    mkdirSync(join(workspace, 'files'));
    for (let i = 0; i < TURNS; i++) writeFileSync(join(workspace, fileName(i)), fileText(i));
    const run = Date.now().toString(36);
    // Each system first runs a small warm-up in its own worker (bundles loaded, connections
    // and caches warm), so neither measured run pays for starting up.
    const warmUp = (system: string) => task(`${system} warm-up ${run}`, 3, 1);
    const measured = (system: string) => task(`${system} ${run}`, TURNS, SIBLINGS);

    // forkflow: a fork, then its siblings by reference to its conversation.
    const budget = { maxTokens: 100_000_000 };
    const runForkflow = async (t: Task) => {
      const agentId = `bench-peer-forkflow-${slug(t.label)}`;
      const t0 = Date.now();
      await client.fork({ agentId, system: SYSTEM, tools: [READ_TOOL], prompt: t.prompt, maxTurns: t.turns + 5, budget }, { mode: 'sync' });
      const handles = await client.forkMany(
        { agentId },
        t.siblings.map((prompt, i) => ({ agentId: `${agentId}-sibling-${i}`, parentAgentId: agentId, prompt, budget })),
      );
      await Promise.all(handles.map((h) => h.result()));
      return { workflowId: agentId, siblingIds: handles.map((h) => h.agentId), startedAt: t0, wallMs: Date.now() - t0 };
    };
    const forkflowTask = measured('forkflow');
    await runForkflow(warmUp('forkflow'));
    const forkflowRun = await runForkflow(forkflowTask);
    const forkflowLog = requestsOf(model.log.entries(), forkflowTask);
    model.log.clear();

    // The peer: its own worker process, same server, same model, same files.
    const peerTask = measured('peer');
    const peerRuns = await runPeer({
      address: bench.stack.server.address,
      namespace: bench.stack.server.namespace,
      modelUrl: model.url,
      workspace,
      system: SYSTEM,
      runs: [warmUp('peer'), peerTask].map((t) => ({ workflowId: `bench-peer-aisdk-${slug(t.label)}`, prompt: t.prompt, maxSteps: t.turns + 5, siblings: t.siblings })),
    });
    const peerRun = peerRuns[1]!;
    const peerLog = requestsOf(model.log.entries(), peerTask);

    // The model's view of both runs, for a look at what each system sent.
    if (process.env.BENCH_PEER_LOG_DIR) {
      mkdirSync(process.env.BENCH_PEER_LOG_DIR, { recursive: true });
      for (const [name, log] of [['forkflow', forkflowLog], ['peer', peerLog]] as const) {
        writeFileSync(join(process.env.BENCH_PEER_LOG_DIR, `${name}.jsonl`), log.map((e) => JSON.stringify({ seq: e.seq, receivedAt: e.receivedAt, endedAt: e.endedAt, usage: e.usage, body: e.body })).join('\n'));
      }
    }
    const temporal = client.temporal;
    const forkflow = await measureSystem(temporal, { ...forkflowRun, log: forkflowLog, siblings: forkflowTask.siblings });
    const peer = await measureSystem(temporal, { ...peerRun, log: peerLog, siblings: peerTask.siblings });
    return { v: 1, measuredAt, node: process.version, loadAverage, cpus: cpus().length, turns: TURNS, siblings: SIBLINGS, forkflow, peer };
  } finally {
    await bench.stop();
  }
}

const slug = (label: string) => label.replace(/[^a-z0-9]+/gi, '-');

function printReport(r: PeerReport): void {
  const rows = compareRow(r.forkflow, r.peer);
  const w0 = Math.max(...rows.map((x) => x[0].length));
  const w1 = Math.max(...rows.map((x) => x[1].length), 'forkflow'.length);
  const title = `bench:peer — ${r.turns} Read turns + ${r.siblings} siblings, Node ${r.node}, offline model (no latency), load ${r.loadAverage} on ${r.cpus} CPUs`;
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
