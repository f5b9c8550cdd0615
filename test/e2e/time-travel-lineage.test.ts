/**
 * Lineage of forks from points (issue 33): a fork from a past turn of an agent that is still
 * running, and a fork of a fork of a fork — each one's first request is its parent's own next
 * request up to its own message, through two levels of references — followed back to the
 * original from the client (`lineage`), the CLI (`forkflow lineage`, `forkflow tree` with its
 * forks by point, `forkflow fork <id> --at-turn k`, `forkflow status`) and the web view (the
 * forks nested under the agents they came from, each saying its turn).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ForkResult, LineageStep } from '../../src/client';
import { startWebView, type WebView } from '../../src/cli/web/server';
import type { RequestLogEntry } from '../../src/offline';
import { installChromium, INSTALL_TIMEOUT_MS, launchChromium } from '../kit/chromium';
import { startHarness, type Harness } from '../kit/env';
import { runForkflow, type ProcessResult } from '../kit/processes';
import { bodyOf, messageRequests } from '../kit/requests';
import { firstUserText, lastSeq, requestOfTurn, requestsEndingWith, requestsWith, sameUpToOwnMessage } from '../kit/time-travel';
import { script, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

jest.setTimeout(180_000);

let h: Harness;
const suffix = Math.random().toString(36).slice(2, 8);
const A = `tt-lin-a-${suffix}`;
const MARK_A = `Lineage agent ${suffix}.`;
const read = toolStep('Read', { file_path: 'small.txt' });
let agentRequests: RequestLogEntry[];

beforeAll(installChromium, INSTALL_TIMEOUT_MS);
beforeAll(async () => {
  h = await startHarness({ name: 'tt-lineage' });
  writeFileSync(join(h.workspaceRoot, 'small.txt'), 'one\ntwo\n');
  const agent = await h.forkflow.start({ agentId: A, prompt: script(MARK_A, `@repeat 7 ${read}`, '@reply done'), querySource: 'agent:main' });
  await expect(agent.result()).resolves.toMatchObject({ status: 'completed', turns: 8 });
  agentRequests = requestsWith(h.model, MARK_A);
});
afterAll(() => h.close());

const cli = (...args: string[]): Promise<ProcessResult> => runForkflow(['--address', h.env.address, '--task-queue', h.taskQueue, ...args]);

/** Forks `parent` at `turn` with a two-turn script (a Read, then a reply); its first request. */
async function forkOf(parent: string, turn: number, id: string) {
  const directive = `Fork ${id}.`;
  const after = lastSeq(h.model);
  const handle = await h.forkflow.forkFrom(parent, { agentId: id, prompt: script(directive, read, `@reply ${id} done`) }, { atTurn: turn });
  const result: ForkResult = await handle.result();
  expect(result).toMatchObject({ status: 'completed', turns: 2, text: `${id} done`, origin: { agentId: parent, turn } });
  return { first: requestsEndingWith(h.model, directive, after)[0]!, directive, after };
}

/** A two-turn fork's second request: after its first, no later than `before`. */
function secondRequest(fork: { first: RequestLogEntry; directive: string }, before: number): RequestLogEntry {
  const count = bodyOf(fork.first).messages.length + 2;
  return messageRequests(h.model).find((e) => e.seq > fork.first.seq && e.seq <= before && e.outcome === 'completed' && bodyOf(e).messages.length === count && JSON.stringify(e.body).includes(fork.directive))!;
}

test('a fork from a past turn of a running agent, and a fork of a fork of a fork, each start from their parent’s own next request', async () => {
  // B is at its fifth call (held in flight) when it is forked from turn 2.
  const B = `tt-lin-b-${suffix}`;
  const markB = `Still running ${suffix}.`;
  const running = await h.forkflow.start({ agentId: B, prompt: script(markB, `@repeat 4 ${read}`, '@sleep 60000 @reply late'), querySource: 'agent:main' });
  await waitFor(() => h.model.log.entries().some((e) => e.outcome === 'pending' && firstUserText(e).includes(markB)), 'B in its fifth call');
  const fromRunning = await forkOf(B, 2, `tt-lin-fb-${suffix}`);
  expect((await h.client.workflow.getHandle(B).describe()).status.name).toBe('RUNNING');
  expect(sameUpToOwnMessage(requestOfTurn(requestsWith(h.model, markB).filter((e) => e.seq < fromRunning.after), 3), fromRunning.first).problems).toEqual([]);
  await running.cancel();

  const [f1, f2, f3] = [1, 2, 3].map((n) => `tt-lin-f${n}-${suffix}`) as [string, string, string];
  const one = await forkOf(A, 5, f1);
  expect(sameUpToOwnMessage(requestOfTurn(agentRequests, 6), one.first).problems).toEqual([]);
  // F1's own second request (A's prefix, its opening, its Read and the result) is where F2
  // starts: the same content, and F2 reads all of what it cached. (Not the same markers: F1
  // marks where A's part ends, for its siblings, and F2 marks where F1's ends, for its own.)
  const two = await forkOf(f1, 1, f2);
  const f1Second = secondRequest(one, two.after);
  expect(sameUpToOwnMessage(f1Second, two.first, { markers: false }).problems).toEqual([]);
  expect(two.first.usage!.cache_read_input_tokens).toBe(f1Second.usage!.cache_read_input_tokens + f1Second.usage!.cache_creation_input_tokens);
  const three = await forkOf(f2, 1, f3);
  const f2Second = secondRequest(two, three.after);
  expect(sameUpToOwnMessage(f2Second, three.first, { markers: false }).problems).toEqual([]);
  expect(three.first.usage!.cache_read_input_tokens).toBe(f2Second.usage!.cache_read_input_tokens + f2Second.usage!.cache_creation_input_tokens);

  // Followed back from the client: each fork names its parent and the turn.
  const steps = await h.forkflow.lineage(f3);
  expect(steps.map((s) => [s.agentId, s.parentId, s.parentTurn])).toEqual([
    [f3, f2, 1],
    [f2, f1, 1],
    [f1, A, 5],
    [A, undefined, undefined],
  ]);

  // …and from the CLI.
  const lineage = await cli('--json', 'lineage', f3);
  expect(lineage.status).toBe(0);
  expect((JSON.parse(lineage.stdout) as LineageStep[]).map((s) => s.parentTurn)).toEqual([1, 1, 5, undefined]);
  const status = await cli('status', f2);
  expect(status.stdout).toMatch(new RegExp(`from\\s+│\\s+${f1} at turn 1 \\(run `));
  const tree = await waitFor(async () => {
    const r = await cli('tree', A);
    return r.stdout.includes(f3) ? r : undefined;
  }, 'the tree to list the forks by point (visibility)');
  expect(tree.stdout).toContain('forks by point');
  expect(tree.stdout).toMatch(new RegExp(`${f1}\\s+│ ${A} at turn 5`));
  expect(tree.stdout).toMatch(new RegExp(` {4}${f3}\\s+│ ${f2} at turn 1`));

  // …and in the web view: each fork nested under the agent it came from, saying the turn.
  const view: WebView = await startWebView({ forkflow: h.forkflow });
  const browser = await launchChromium({ width: 1300, height: 900 });
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.setDefaultTimeout(20_000);
    await page.goto(view.url);
    await page.locator('#show-finished').check();
    const nested = page.locator(`li[data-agent-id="${A}"] li[data-agent-id="${f1}"] li[data-agent-id="${f2}"] li[data-agent-id="${f3}"]`);
    await nested.waitFor();
    expect(await nested.locator(':scope > .row .origin').textContent()).toBe(`from turn 1 of ${f2}`);
    expect(await page.locator(`li[data-agent-id="${f1}"] > .row .origin`).textContent()).toBe(`from turn 5 of ${A}`);
  } finally {
    await browser.close();
    await view.close();
  }
});

test('forkflow fork <id> --at-turn k forks from that turn; a negative turn or one past the end is a usage error', async () => {
  const id = `tt-lin-cli-${suffix}`;
  const r = await cli('--json', 'fork', A, '--at-turn', '3', '--prompt', 'From the CLI.\n@reply cli fork', '--agent-id', id, '--wait');
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed', text: 'cli fork', origin: { agentId: A, turn: 3 } });

  const negative = await cli('fork', A, '--at-turn', '-1', '--prompt', 'never');
  expect(negative.status).toBe(2);
  expect(negative.stderr).toMatch(/--at-turn takes a turn: an integer ≥ 0/);
  const past = await cli('fork', A, '--at-turn', '9', '--prompt', 'never');
  expect(past.status).toBe(2);
  expect(past.stderr).toContain(`Agent ${A} has taken 8 turns: turn 9 is past its end`);
});
