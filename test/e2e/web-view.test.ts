/**
 * forkflow's own web view (`forkflow serve`, src/cli/web + web/) in headless Chromium: a root
 * agent starts a sub-agent whose model call streams slowly (`@pace`: small deltas, spaced);
 * the page lists both as a tree (the child under its root) with states and usage; selecting
 * the child streams its text into the page while its call is still in flight, and once it
 * is done the page's text equals its result. The page is served by a real `forkflow serve`
 * process; the worker and the offline model run in this process (test/kit/env.ts). A
 * full-page screenshot of each step lands in test-artifacts/, and the time the 31-agent tree's
 * pictures took to draw in test-artifacts/web-view-render.json (printed too; npm run bench:web).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { ForkHandle, ForkResult } from '../../src/client';
import { totalTokens } from '../../src/shared/messages-api/anthropic';
import { startHarness, type Harness } from '../kit/env';
import { installChromium, INSTALL_TIMEOUT_MS, launchChromium, type Browser } from '../kit/chromium';
import { forkflowArgs } from '../kit/processes';
import { checkResume, type Relayed } from '../kit/sse-read';
import { agentStep, script } from '../kit/tree';
import { barsOnPage, BUDGET, countBy, drawTimes, EXPECTED_EDGES, EXPECTED_LABELS, graphOnPage, ROOT_PROMPT, settled, SUB_AGENTS, timelineOnPage, TREE_SIZE, WRAP_UP, type GraphBox } from '../kit/web-tree';
import { waitFor } from '../kit/wait';

const root = join(__dirname, '..', '..');
const artifacts = join(root, 'test-artifacts');

beforeAll(installChromium, INSTALL_TIMEOUT_MS);

const suffix = Math.random().toString(36).slice(2, 8);
const rootId = `web-view-${suffix}`;
const label = `web-view-probe-${suffix}`;
// The sub-agent's id: its parent's, a dot, its name and its number among the parent's children.
const childId = `${rootId}.streamer-1`;
// Markup and a newline in the model's text: the page must show them as text, not build elements.
const REPLY = 'Streaming, <b>not markup</b> & "quoted" — line one.\nLine two ends the reply.';
// The child's call streams its text a few words at a time, this far apart (src/offline @pace):
// about five seconds in all, so the page can be seen mid-call.
const PACE_MS = 400;
const CHILD_DIRECTIVE = 'Say it slowly.';

let h: Harness;
let serve: ChildProcess | undefined;
/** What `forkflow serve` printed (for a failure's message). */
let serveOut = '';
let viewUrl: string;
/** The URL `forkflow serve` prints to sign a browser in (it carries the token). */
let loginUrl: string;
/** The same token, for this process's own requests. */
let auth: Record<string, string>;
let rootAgent: ForkHandle | undefined;
let treeAgent: ForkHandle | undefined;
let browser: Browser;
let page: Page;
let resumeCheck: Promise<{ first: Relayed[]; resumed: Relayed[]; after: number }> | undefined;

/** `forkflow serve --port 0` in its own process; resolves with the URL it prints (and keeps the sign-in URL). */
async function startServe(): Promise<string> {
  const env = h.env;
  const child = spawn(process.execPath, forkflowArgs(['--address', env.address, '--namespace', env.namespace, '--task-queue', h.taskQueue, 'serve', '--port', '0']), {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  serve = child;
  return new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      serveOut += c.toString();
      const m = /web view: (http:\/\/\S+)/.exec(serveOut);
      const open = /open: (http:\/\/\S+)/.exec(serveOut);
      if (m && open) {
        loginUrl = open[1]!;
        auth = { Authorization: `Bearer ${new URL(loginUrl).searchParams.get('token')}` };
        resolve(m[1]!);
      }
    });
    child.stderr.on('data', (c: Buffer) => (serveOut += c.toString()));
    child.once('exit', (code) => reject(new Error(`forkflow serve exited early (${code}): ${serveOut}`)));
  });
}

beforeAll(async () => {
  h = await startHarness({ name: 'web-view' });
  [viewUrl, browser] = await Promise.all([startServe(), launchChromium({ width: 1300, height: 900 })]);
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  page.setDefaultTimeout(60_000);
  mkdirSync(artifacts, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  // The root ends on its own once its child reported; cancelled in case a failure left it
  // waiting (cancelling a closed agent fails, harmlessly).
  await rootAgent?.cancel().catch(() => undefined);
  await treeAgent?.cancel().catch(() => undefined);
  if (serve && serve.exitCode === null) {
    const exited = once(serve, 'exit');
    serve.kill('SIGTERM');
    await exited;
  }
  await h?.close();
});

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(artifacts, `web-view-${name}.png`), fullPage: true });
}

const turnText = () => page.locator('#turns .turn .text').last();
const text = async (selector: string) => (await page.locator(selector).textContent()) ?? '';

test('the page lists the tree with states and usage, streams the child’s text while its model call runs, and ends with its result', async () => {
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  // Signed in by the printed URL: its token becomes a session cookie, and the page is at / .
  await page.goto(loginUrl);
  expect(page.url()).toBe(`${viewUrl}/`);

  const child = script(CHILD_DIRECTIVE, `@pace ${PACE_MS} @reply ${REPLY.replace(/\n/g, '\\n')}`);
  rootAgent = await h.forkflow.startAgent({ agentId: rootId, forkLabel: label, prompt: script('Coordinate.', agentStep({ description: 'streamer', name: 'streamer', prompt: child }), '@reply waiting', '@reply all done') });
  // In the list of running agents (visibility): the child nested under its root, each with
  // its label, state and usage.
  const rowOf = (id: string) => page.locator('#agents li').filter({ has: page.getByRole('button', { name: id, exact: true }) });
  const rootRow = rowOf(rootId);
  const childRow = rootRow.locator('ul li').filter({ has: page.getByRole('button', { name: childId, exact: true }) });
  try {
    await childRow.locator('.state').getByText('running', { exact: true }).waitFor();
    await childRow.locator('.label').getByText('streamer', { exact: true }).waitFor();
    await rootRow.locator('.label').first().getByText(label, { exact: true }).waitFor();
    // Live counters (src/cli/web/live-rows.ts, from the root's ledger): none yet while the
    // child's first call runs.
    expect(await childRow.locator('.usage').textContent()).toBe('0 turns · 0 tokens');
  } finally {
    await shot('list');
  }
  // Checked in the next test; it must subscribe while the child runs.
  resumeCheck = checkResume(`${viewUrl}/api/stream?agent=${encodeURIComponent(childId)}`, auth);
  void resumeCheck.catch(() => undefined);

  await childRow.getByRole('button', { name: childId, exact: true }).click();
  await page.locator('#detail-title').getByText(childId, { exact: true }).waitFor();

  // Text arrives while the model call is still in flight: a strict prefix of the reply,
  // seen while the offline model has not finished the child's response.
  const partial = await waitFor(async () => {
    const shown = (await turnText().textContent({ timeout: 100 }).catch(() => null)) ?? '';
    return shown.length > 0 ? shown : undefined;
  }, 'streamed text on the page');
  const inFlight = h.model.log.entries().some((e) => e.outcome === 'pending' && JSON.stringify(e.body).includes(CHILD_DIRECTIVE));
  await shot('streaming');
  expect(REPLY.startsWith(partial)).toBe(true);
  expect(partial.length).toBeLessThan(REPLY.length);
  expect(inFlight).toBe(true);
  // The root, waiting on its child, shows its turns and tokens so far while visibility still
  // has nothing for it (written when it leaves running).
  const rootUsage = rootRow.locator('.usage').first();
  const ledgerLine = async () => {
    const n = (await h.forkflow.tree(rootId)).usage!.perAgent.find((a) => a.agentId === rootId)!;
    return `${n.turns} turn${n.turns === 1 ? '' : 's'} · ${totalTokens(n.usage).toLocaleString('en-US')} tokens`;
  };
  // The row follows the ledger within a refresh (the root may be between turns when first read).
  const shown = await waitFor(async () => {
    const [want, got] = [await ledgerLine(), await rootUsage.textContent()];
    return want === got ? got : undefined;
  }, 'the root’s row to show its ledger’s counters', 30_000);
  expect(shown).toMatch(/^[1-9]\d* turns? · [1-9][\d,]* tokens$/);
  expect(await rootUsage.getAttribute('data-source')).toBe('ledger');
  expect((await h.forkflow.list({ query: `WorkflowId = '${rootId}'` }))[0]?.turns).toBeUndefined();

  const result: ForkResult = await h.forkflow.result(childId);
  expect(result).toMatchObject({ status: 'completed', text: REPLY });
  // Once done: the stream ended, the page's text is the child's final text, the state is final.
  try {
    // Normally within a second. CI once saw no end within 15 s while the other lane loaded the
    // machine: past that the page's state is taken down, and it gets a while longer.
    const ended = () => page.locator('#stream-status').getByText('ended', { exact: true });
    const onTime = await ended()
      .waitFor()
      .then(() => true)
      .catch(() => false);
    if (!onTime) {
      const why = await whyNotEnded();
      await ended()
        .waitFor({ timeout: 90_000 })
        .catch((err: Error) => {
          throw new Error(`${err.message}\n${why}`);
        });
      console.warn(`web-view: the page's stream ended late; at 15 s:\n${why}`);
    }
    expect(await turnText().textContent()).toBe(result.text);
    await page.locator('#fact-state').getByText('completed', { exact: true }).waitFor();
    expect(await text('#fact-tokens')).toMatch(/^[\d,]+ \(in [\d,]+, cache read [\d,]+, cache write [\d,]+, out [\d,]+\)$/);
  } finally {
    await shot('done');
  }
  // The model's markup stayed text: no element was made of it.
  expect(await page.locator('#turns b').count()).toBe(0);

  // Finished agents leave the running list; "show finished" lists the child with its final
  // state and the usage of its one turn: the result's tokens, all of them.
  await page.getByLabel('show finished').check();
  await childRow.locator('.state').getByText('completed', { exact: true }).waitFor();
  const tokens = result.usage.inputTokens + result.usage.cacheReadInputTokens + result.usage.cacheCreationInputTokens + result.usage.outputTokens;
  expect(tokens).toBeGreaterThan(0);
  await childRow.locator('.usage').getByText(`1 turn · ${tokens.toLocaleString('en-US')} tokens`, { exact: true }).waitFor();
  await shot('finished');
  expect(pageErrors).toEqual([]);
  // Room for the late end above (15 s, the diagnosis, 45 s) on top of the usual ~10 s.
}, 120_000);

test('the stream endpoint resumes after Last-Event-ID: a reconnect gets what follows it, from the next seq on', async () => {
  const { first, resumed, after } = await resumeCheck!;
  expect(first.map((e) => e.type)).toEqual(expect.arrayContaining(['turn-start', 'text-delta', 'turn-end']));
  const seqs = first.map((e) => e.seq);
  expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
  // The reconnect starts after its Last-Event-ID (seqs are ordered, not contiguous), repeats
  // nothing, and gets the same events as the first subscriber, every text delta included.
  expect(resumed[0]!.seq).toBeGreaterThan(after);
  expect(resumed.every((e, i) => i === 0 || e.seq > resumed[i - 1]!.seq)).toBe(true);
  expect(resumed.map((e) => e.seq)).toEqual(first.filter((e) => e.seq > after).map((e) => e.seq));
  const bySeq = new Map(first.map((e) => [e.seq, e]));
  for (const e of resumed) if (bySeq.has(e.seq)) expect(e).toEqual(bySeq.get(e.seq));
  const deltasAfter = first.filter((e) => e.seq > after && e.type === 'text-delta');
  expect(deltasAfter.length).toBeGreaterThan(0);
  expect(resumed.filter((e) => e.type === 'text-delta')).toEqual(deltasAfter);
  // A closed agent's stream is what its run recorded (rebuilt by replay), through `done`; then the relay ends it.
  const closed = await fetch(`${viewUrl}/api/stream?agent=${encodeURIComponent(childId)}`, { headers: auth });
  const closedBody = await closed.text();
  expect(closed.status).toBe(200);
  expect(closedBody.startsWith('retry: 1000\n\n')).toBe(true);
  expect(closedBody.endsWith('event: end\ndata: {}\n\n')).toBe(true);
  const recorded = [...closedBody.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]!) as Relayed).filter((e) => 'type' in e);
  expect(recorded.map((e) => e.type)).toEqual(['turn-end', 'done']);
  // An unknown agent is a 404 before any stream opens (EventSource then stops retrying).
  const missing = await fetch(`${viewUrl}/api/stream?agent=no-such-agent-${suffix}`, { headers: auth });
  expect([missing.status, await missing.json()]).toEqual([404, { error: `no agent "no-such-agent-${suffix}"` }]);
});

test('an agent selected after it ended shows what its run recorded: the reply whole, from its turn-end', async () => {
  const result = await h.forkflow.result(childId);
  // The page still has #agent=<child> in its location: a reload opens it afresh.
  await page.reload();
  await page.locator('#detail-title').getByText(childId, { exact: true }).waitFor();
  await page.locator('#stream-status').getByText('ended', { exact: true }).waitFor();
  expect(await page.locator('#turns .turn').count()).toBe(1);
  expect(await turnText().textContent()).toBe(result.text);
  expect(await page.locator('#latest').isHidden()).toBe(true);
  await shot('reopened');
});

/**
 * For a page whose stream did not end: what it shows, whether this process's own client
 * reads the child's stream through `done`, and what the relay printed.
 */
async function whyNotEnded(): Promise<string> {
  const status = await text('#stream-status').catch((e: Error) => `? (${e.message})`);
  const error = await text('#error').catch(() => '');
  const direct: string[] = [];
  const signal = AbortSignal.timeout(10_000);
  try {
    for await (const e of h.forkflow.stream(childId, { signal })) direct.push(e.type);
  } catch (err) {
    direct.push(`threw: ${(err as Error).message}`);
  }
  return [`page stream status "${status}", page error "${error}"`, `this process's stream of the child${signal.aborted ? ' (cut at 10 s)' : ''}: ${direct.join(' ') || 'nothing'}`, `forkflow serve printed: ${serveOut.slice(-2000) || 'nothing'}`].join('\n');
}

test('a 30-agent tree: a graph whose edges say how each child started, a timeline, token bars; every counter equals tree()’s, live and at the end', async () => {
  const treeId = `web-tree-${suffix}`;
  treeAgent = await h.forkflow.startAgent({ agentId: treeId, forkLabel: 'web-tree', prompt: ROOT_PROMPT, subAgents: SUB_AGENTS, budget: BUDGET });
  await page.goto(`${viewUrl}/#${new URLSearchParams({ agent: treeId }).toString()}`);
  await waitFor(() => settled(h.forkflow, treeId), 'the tree to settle (all but the root and its teammates done)', 240_000);

  // Settled: no agent starts or ends until WRAP_UP. Every counter the page shows must be the
  // ledger's. In a tree that lends budget shares a member's row moves when its report reaches
  // the root (when it asks, is recalled or ends), which may be after the tree settled: so the
  // page is compared with the ledger as it stands, read again until both agree.
  const boxes = async () => (await graphOnPage(page)).map(({ edge: _edge, ...box }) => box).sort(byId);
  const expected = (t: Awaited<ReturnType<typeof h.forkflow.tree>>) => {
    const states = new Map(t.agents.map((a) => [a.agentId, a.state]));
    return t.usage!.perAgent.map((n): GraphBox => ({ agentId: n.agentId, state: states.get(n.agentId) ?? '?', turns: n.turns, tokens: totalTokens(n.usage), source: 'ledger' })).sort(byId);
  };
  // The list: the root still runs, so visibility has no counters for it; its row reads the ledger's.
  const rootUsage = page.locator('#agents li').filter({ has: page.getByRole('button', { name: treeId, exact: true }) }).locator('.usage').first();
  const rowOf = (t: Awaited<ReturnType<typeof h.forkflow.tree>>) => {
    const n = t.usage!.perAgent.find((a) => a.agentId === treeId)!;
    return `${n.turns} turns · ${totalTokens(n.usage).toLocaleString('en-US')} tokens`;
  };
  await waitFor(async () => (await rootUsage.textContent()) === rowOf(await h.forkflow.tree(treeId)), "the root's row to read the ledger", 60_000);
  expect((await h.forkflow.list({ query: `WorkflowId = '${treeId}'` }))[0]?.turns).toBeUndefined();
  // The graph: 30 boxes, each with the ledger's turns and tokens and visibility's state; the edges
  // say how each child was started.
  let live = await h.forkflow.tree(treeId);
  await waitFor(async () => {
    live = await h.forkflow.tree(treeId);
    return JSON.stringify(await boxes()) === JSON.stringify(expected(live));
  }, 'the graph to show the settled tree', 60_000).catch(() => undefined);
  const want = expected(live);
  expect(want).toHaveLength(TREE_SIZE);
  const rootLedger = live.usage!.perAgent.find((a) => a.agentId === treeId)!;
  expect(rootLedger.turns).toBeGreaterThan(1);
  expect(await boxes()).toEqual(want);
  const ledger = new Map(live.usage!.perAgent.map((n) => [n.agentId, n]));
  const graph = await graphOnPage(page);
  expect(countBy(graph, (b) => b.edge?.kind ?? 'root')).toEqual({ root: 1, ...EXPECTED_EDGES });
  expect(countBy(graph.filter((b) => b.edge), (b) => b.edge!.label)).toEqual(EXPECTED_LABELS);
  // The bars: the tree's total and each agent's, by kind, with the ledger's cost.
  const bars = await barsOnPage(page);
  const total = live.usage!.total;
  expect(bars[0]).toMatchObject({ agentId: '', tokens: totalTokens(total.usage), cost: total.costUsd, input: total.usage.inputTokens, cacheRead: total.usage.cacheReadInputTokens, cacheWrite: total.usage.cacheCreationInputTokens, output: total.usage.outputTokens });
  expect(bars[0]!.text).toBe(`${totalTokens(total.usage).toLocaleString('en-US')} tok · $${total.costUsd.toFixed(4)}`);
  expect(bars.slice(1).map((b) => [b.agentId, b.tokens, b.cost, b.input, b.cacheRead, b.cacheWrite, b.output]).sort()).toEqual(
    [...ledger.values()].map((n) => [n.agentId, totalTokens(n.usage), n.costUsd, n.usage.inputTokens, n.usage.cacheReadInputTokens, n.usage.cacheCreationInputTokens, n.usage.outputTokens]).sort(),
  );
  // The root's timeline: a model call per turn, its Glob, its nine sub-agents, and the wait it is
  // in. Its turns are the root's own (its status): its ledger row counts what it has reported.
  const rootTurns = (await h.forkflow.status(treeId)).turns;
  const timeline = await waitFor(async () => {
    const t = await timelineOnPage(page);
    return (t.spans.wait ?? 0) > 0 && t.spans.model === rootTurns ? t : undefined;
  }, 'the root’s timeline with its wait', 30_000);
  expect(timeline.spans).toMatchObject({ turn: rootTurns, model: rootTurns, tool: 1, child: 9 });
  expect(timeline.marks['child-report']).toBeGreaterThan(0);
  await shot('tree-live');

  // The end: the teammates shut down, the root finishes; then a fork from its turn 1.
  await h.forkflow.sendMessage(treeId, { message: WRAP_UP, summary: 'wrap up' });
  expect(await treeAgent.result()).toMatchObject({ status: 'completed', text: 'all done' });
  const branch = await h.forkflow.forkFrom(treeId, { prompt: '@reply branched', forkLabel: 'branch' }, { atTurn: 1 });
  const branched = await branch.result();
  expect(branched).toMatchObject({ status: 'completed', text: 'branched' });
  // What `forkflow tree` prints (--json): the tree, and the forks from points of its agents.
  // The fork's row comes from visibility, which may still say running just after its result:
  // wait until it records the end the result already told (the page reads the same record).
  const forks = await waitFor(async () => {
    const f = await h.forkflow.forksOf([treeId]);
    return f[0]?.state === 'completed' ? f : undefined;
  }, 'the branch\'s visibility record to say it completed');
  const done = await h.forkflow.tree(treeId);
  expect(forks.map((f) => [f.agentId, f.parentTurn])).toEqual([[branch.agentId, 1]]);
  const finalLedger = new Map(done.usage!.perAgent.map((n) => [n.agentId, n]));
  const wantDone = [
    ...[...finalLedger.values()].map((n): GraphBox => ({ agentId: n.agentId, state: 'completed', turns: n.turns, tokens: totalTokens(n.usage), source: 'ledger' })),
    { agentId: branch.agentId, state: forks[0]!.state!, turns: forks[0]!.turns!, tokens: totalTokens(branched.usage), source: 'visibility' },
  ].sort(byId);
  expect(done.counts).toMatchObject({ completed: TREE_SIZE, running: 0 });
  // Measured from a fresh load of the page on the finished tree: when each picture was first drawn.
  const loading = Date.now();
  await page.reload();
  await waitFor(async () => JSON.stringify(await boxes()) === JSON.stringify(wantDone), 'the graph of the finished tree', 30_000).catch(() => undefined);
  expect(await boxes()).toEqual(wantDone);
  await page.locator('#timeline .span').first().waitFor();
  const wall = Date.now() - loading;
  const drawn = await drawTimes(page);
  console.log(`web-view: a ${TREE_SIZE + 1}-agent tree drawn after a reload in ${wall} ms (graph ${drawn.graph} ms, bars ${drawn.bars} ms, timeline ${drawn.timeline} ms after navigation)`);
  // Kept beside the screenshots, for whoever compares runs (a figure, not a threshold).
  writeFileSync(join(artifacts, 'web-view-render.json'), `${JSON.stringify({ agents: TREE_SIZE + 1, wallMs: wall, sinceNavigationMs: drawn }, null, 2)}\n`);
  const edges = (await graphOnPage(page)).filter((b) => b.edge);
  expect(edges.find((b) => b.agentId === branch.agentId)?.edge).toEqual({ kind: 'from-turn', label: 'from turn 1' });
  expect(await text('#fact-tree')).toBe(`${treeId} · ${TREE_SIZE} agent(s) · ${TREE_SIZE} completed`);
  expect((await barsOnPage(page))[0]).toMatchObject({ tokens: totalTokens(done.usage!.total.usage), cost: done.usage!.total.costUsd });
  await shot('tree-done');
}, 420_000);

const byId = (a: { agentId: string }, b: { agentId: string }) => a.agentId.localeCompare(b.agentId);
