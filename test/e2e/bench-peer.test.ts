/**
 * Smoke test of `npm run bench:peer` (bench/peer.ts): a small version of the side-by-side run
 * (5 Read turns, 2 siblings) through the same launcher, under Node 24 with the peer installed
 * from its own lockfile (scripts/install-bench-peer.sh; `npm test` prefetches both). It
 * asserts that both systems finished the task and that the figures are sane, never how fast
 * anything was: the peer's history grows faster per turn than forkflow's because each of its
 * model activities carries the whole conversation.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeerReport } from '../../bench/peer';
import type { SystemFigures } from '../../bench/peer-measure';
import { run, type ProcessResult } from '../kit/processes';

const root = join(__dirname, '..', '..');
const TURNS = 5;
const SIBLINGS = 2;

let report: PeerReport;
let peerTypeCheck: Promise<ProcessResult>;

beforeAll(async () => {
  // A fresh machine installs Node 24 and the peer's packages first (`npm test` prefetches them).
  // Type-stripping Node runs the peer's TypeScript unchecked: tsc checks it, alongside the run
  // (which mostly waits on the servers), once the peer's packages are installed.
  const installed = run('bash', [join(root, 'scripts', 'install-bench-peer.sh')], { timeoutMs: 9 * 60_000 });
  peerTypeCheck = installed.then(() => run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'bench', 'peer')], { timeoutMs: 5 * 60_000 }));
  const out = join(mkdtempSync(join(tmpdir(), 'forkflow-bench-peer-')), 'peer.json');
  const env = { ...process.env, BENCH_PEER_TURNS: String(TURNS), BENCH_PEER_SIBLINGS: String(SIBLINGS), BENCH_PEER_OUT: out };
  if ((await installed).status !== 0) throw new Error(`scripts/install-bench-peer.sh failed: ${(await installed).stderr}`);
  const result = await run(process.execPath, [join(root, 'scripts', 'bench-peer.mjs')], { env, timeoutMs: 9 * 60_000 });
  if (result.status !== 0) throw new Error(`bench:peer exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  expect(result.stdout).toContain('@temporalio/ai-sdk 1.23.0');
  report = JSON.parse(readFileSync(out, 'utf8')) as PeerReport;
}, 10 * 60_000);

test('both systems run under Node 24 and finish the whole task', () => {
  expect(report).toMatchObject({ v: 1, turns: TURNS, siblings: SIBLINGS });
  expect(report.node).toMatch(/^v24\./);
  for (const system of [report.forkflow, report.peer]) {
    // One request per Read, then the one that replies; one request per sibling.
    expect(system.agentTurns).toBe(TURNS + 1);
    expect(system.siblingRequests).toBe(SIBLINGS);
    expect(system.wallMs).toBeGreaterThan(0);
  }
});

test.each<[string, (r: PeerReport) => SystemFigures]>([
  ['forkflow', (r) => r.forkflow],
  ['the peer', (r) => r.peer],
])('%s: the figures are sane', (_name, pick) => {
  const s = pick(report);
  expect(s.history.agentBytes).toBeGreaterThan(0);
  expect(s.history.totalBytes).toBeGreaterThan(s.history.agentBytes);
  expect(s.history.agentBytesPerTurn).toBe(Math.round(s.history.agentBytes / s.agentTurns));
  expect(s.history.largestPayloadBytes).toBeGreaterThan(0);
  expect(s.history.largestPayloadBytes).toBeLessThan(s.history.agentBytes);
  expect(s.history.eventsPerTurn).toBeGreaterThan(1);
  expect(s.overheadMs.median).toBeGreaterThanOrEqual(0);
  expect(s.overheadMs.p95).toBeGreaterThanOrEqual(s.overheadMs.median);
  // Each sibling's first request shares the agent's conversation, which the agent's last turn cached.
  expect(s.siblingFirstCacheRead.min).toBeGreaterThan(0);
  expect(s.siblingFirstCacheRead.median).toBeLessThanOrEqual(1);
  expect(s.tokens.total).toBe(s.tokens.input + s.tokens.cacheCreation + s.tokens.cacheRead);
  expect(s.tokens.cacheRead).toBeGreaterThan(0);
});

test("the peer's history grows faster per turn than forkflow's and holds larger payloads", () => {
  expect(report.peer.history.agentBytesPerTurn).toBeGreaterThan(report.forkflow.history.agentBytesPerTurn);
  expect(report.peer.history.largestPayloadBytes).toBeGreaterThan(report.forkflow.history.largestPayloadBytes);
});

test("the peer's own sources type-check against the packages it is locked to", async () => {
  const tsc = await peerTypeCheck;
  expect(tsc.stdout + tsc.stderr).toBe('');
  expect(tsc.status).toBe(0);
});
