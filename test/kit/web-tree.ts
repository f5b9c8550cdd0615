/**
 * A 30-agent tree for the web view's test (test/e2e/web-view.test.ts), scripted for the offline
 * model, with every way a child can be started that a tree shows on its edges:
 *
 *   root ── 2 forks of itself
 *        ── 4 named `worker` agents ── each: 2 forks of itself, 3 named `helper` agents
 *        ── 1 general-purpose agent
 *        ── 2 teammates in team `crew` (they stay until the root's shutdown requests)
 *
 * 1 + 2 + 4 + 4 × 5 + 1 + 2 = 30 agents. Once everything but the teammates has finished, the
 * root waits for its teammates and nothing changes until the test sends it WRAP_UP: a settled
 * tree whose live counters can be compared with `tree()`'s exactly. A fork from turn 1 of the
 * root, started afterwards, adds the edge "from a past turn".
 */
import type { AgentDefinition } from '../../src/shared/agents/agents';
import type { Page } from 'playwright-core';
import type { ForkflowClient } from '../../src/client';
import { script, toolStep } from './tree';

export const TREE_SIZE = 30;
export const TEAM = 'crew';
export const MATES = ['mate-a', 'mate-b'] as const;

const definition = (name: string, description: string): AgentDefinition => ({ name, description, systemPrompt: `You are the ${name}.`, sourceFile: `${name}.md` });
export const AGENTS = [definition('worker', 'Works on one part.'), definition('helper', 'Helps a worker.')];

const agent = (input: Record<string, unknown>) => ({ name: 'Agent', input });
const tools = (calls: unknown[]) => `@tools ${JSON.stringify(calls)}`;
// Spare replies: a parent takes one more turn for each batch of its background children's reports.
const spares = (n: number, text: string) => `@repeat ${n} @reply ${text}`;

const helper = script('Help with the part.', toolStep('Glob', { pattern: '*' }), '@reply helped');
const worker = (k: number) =>
  script(
    `Work on part ${k}.`,
    tools([
      agent({ description: `check part ${k}`, prompt: '@reply checked' }),
      agent({ description: `recheck part ${k}`, prompt: '@reply rechecked' }),
      ...[1, 2, 3].map((i) => agent({ description: `helper ${i} of part ${k}`, subagent_type: 'helper', prompt: helper })),
    ]),
    spares(8, `part ${k} done`),
  );

/** The root's directive. */
export const ROOT_PROMPT = script(
  'Coordinate the crew.',
  toolStep('Glob', { pattern: '*' }),
  tools([
    agent({ description: 'look around', prompt: '@reply looked' }),
    agent({ description: 'look again', prompt: '@reply looked again' }),
    ...[1, 2, 3, 4].map((k) => agent({ description: `part ${k}`, subagent_type: 'worker', prompt: worker(k) })),
    agent({ description: 'odd job', subagent_type: 'general-purpose', prompt: script('Do the odd job.', '@reply odd job done') }),
    ...MATES.map((name) => agent({ description: `teammate ${name}`, name, team_name: TEAM, prompt: script(`Stand by, ${name}.`, '@reply ready') })),
  ]),
  spares(12, 'waiting for the word'),
);

/** The message that ends the tree: the teammates are shut down, the root finishes. */
export const WRAP_UP = script('Wrap up.', tools(MATES.map((to) => ({ name: 'SendMessage', input: { to, message: { type: 'shutdown_request', reason: 'done' } } }))), spares(6, 'all done'));

/** The root's sub-agent configuration: named agents, nested spawns, teams, room for 30 at once. */
export const SUB_AGENTS = { agents: AGENTS, nested: true, teams: true, maxTreeRunning: 40 };

/** The tree's budget: 30 agents' opening prompts would use up the default one. */
export const BUDGET = { maxTokens: 10_000_000 };

/** Edges by kind and label, as the script starts them. */
export const EXPECTED_EDGES = { fork: 10, named: 16, general: 1, teammate: 2 };
export const EXPECTED_LABELS = { fork: 10, 'named: worker': 4, 'named: helper': 12, general: 1, [`teammate: ${TEAM}`]: 2 };

/**
 * True once the tree has settled: every agent but the root and its teammates completed, the
 * root waiting for those two with no message queued, and each teammate done with its turn.
 */
export async function settled(forkflow: ForkflowClient, rootId: string): Promise<boolean> {
  // The root first (one query): the rest is read only once it waits for its teammates alone.
  const root = await forkflow.status(rootId);
  if (root.activity !== `waiting for ${MATES.length} sub-agent(s)` || root.pendingMessages > 0) return false;
  const tree = await forkflow.tree(rootId);
  if (tree.agents.length !== TREE_SIZE || tree.counts.completed !== TREE_SIZE - 1 - MATES.length) return false;
  const mates = (tree.usage?.perAgent ?? []).filter((n) => n.team === TEAM);
  if (mates.length !== MATES.length) return false;
  // A teammate's own status, not its ledger row: in a tree that lends budget shares a running
  // member's row is as of its last report (when it asks, is recalled or ends), so an idle
  // teammate's row may still read 0 turns (docs/guides/scale.md).
  const statuses = await Promise.all(mates.map((m) => forkflow.status(m.agentId)));
  return statuses.every((s) => s.turns >= 1 && s.activity === undefined && s.pendingMessages === 0);
}

/** A box of the page's graph, with the edge that leads to it. */
export interface GraphBox {
  agentId: string;
  state: string;
  turns: number;
  tokens: number;
  source: string;
  edge?: { kind: string; label: string };
}

// The readers run in the page (their source is sent as text: this project compiles without the DOM's types).

/** The page's graph as its elements say it (data attributes the page sets from the endpoint's answer). */
export function graphOnPage(page: Page): Promise<GraphBox[]> {
  return page.evaluate<GraphBox[]>(`(() => {
    const edges = new Map([...document.querySelectorAll('#graph .edge')].map((e) => [e.dataset.child, { kind: e.dataset.edgeKind, label: e.dataset.edgeLabel }]));
    return [...document.querySelectorAll('#graph .node')].map((n) => {
      const edge = edges.get(n.dataset.agentId);
      return { agentId: n.dataset.agentId, state: n.dataset.state, turns: Number(n.dataset.turns), tokens: Number(n.dataset.tokens), source: n.dataset.source, ...(edge ? { edge } : {}) };
    });
  })()`);
}

export interface BarRow {
  agentId: string;
  tokens: number;
  cost: number;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  text: string;
}

/** The page's token bars: the tree's total (agentId '') and one per agent. */
export function barsOnPage(page: Page): Promise<BarRow[]> {
  return page.evaluate<BarRow[]>(`[...document.querySelectorAll('#bars .bar-row')].map((b) => ({
    agentId: b.dataset.agentId, tokens: Number(b.dataset.tokens), cost: Number(b.dataset.cost), input: Number(b.dataset.input),
    cacheRead: Number(b.dataset.cacheRead), cacheWrite: Number(b.dataset.cacheWrite), output: Number(b.dataset.output),
    text: b.querySelector('.bar-numbers')?.textContent ?? '',
  }))`);
}

/** The page's timeline: how many spans of each kind, and marks of each kind. */
export function timelineOnPage(page: Page): Promise<{ spans: Record<string, number>; marks: Record<string, number>; summary: string }> {
  return page.evaluate(`(() => {
    const tally = (selector) => {
      const out = {};
      for (const e of document.querySelectorAll(selector)) out[e.dataset.kind] = (out[e.dataset.kind] ?? 0) + 1;
      return out;
    };
    return { spans: tally('#timeline .span'), marks: tally('#timeline .mark'), summary: document.getElementById('timeline-summary').textContent };
  })()`);
}

/** When the page first drew each picture for the agent it opened: ms since navigation (performance marks web/app.js sets). */
export function drawTimes(page: Page): Promise<Record<string, number>> {
  return page.evaluate(`Object.fromEntries(performance.getEntriesByType('mark').filter((m) => m.name.startsWith('forkflow:')).map((m) => [m.name.slice(9), Math.round(m.startTime)]))`);
}

/** How many of `items` have each value of `key`. */
export function countBy<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of items) out[key(t)] = (out[key(t)] ?? 0) + 1;
  return out;
}
