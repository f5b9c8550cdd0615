// Token and cost bars (SVG): the tree's total, then one bar per agent in the graph's order,
// each split into uncached input, cache reads, cache writes and output, with the part the
// Message Batches API delivered (half price) as a strip beneath. Numbers are the graph
// endpoint's: the root's ledger where the tree keeps one (the same as `forkflow tree`).
import { el, fmt, svg, svgText, tooltip, totalTokens, usd } from './dom.js';
import { treeOrder } from './graph.js';

const SEGMENTS = [
  ['inputTokens', 'input', 'input'],
  ['cacheReadInputTokens', 'cache-read', 'cache read'],
  ['cacheCreationInputTokens', 'cache-write', 'cache write'],
  ['outputTokens', 'output', 'output'],
];
const LABEL_W = 190;
const NUMBERS_W = 230;
const ROW = 22;
const BAR_H = 12;

/** The legend of the bars' colours (drawn once). */
export function barsLegend() {
  return el('ul', 'legend', ...SEGMENTS.map(([, key, words]) => el('li', `bar-key seg-${key}`, el('span', 'key-box'), words)), el('li', 'bar-key seg-batch', el('span', 'key-box'), 'delivered by batch (half price)'));
}

const sumUsage = (list) => {
  const out = { inputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 0 };
  for (const u of list) for (const [k] of SEGMENTS) out[k] += u[k];
  return out;
};

function bar(y, width, scale, item) {
  const { id, label, usage, tokens, cost, className } = item;
  const g = svg('g', { class: `bar-row ${className}`, transform: `translate(0,${y})`, 'data-agent-id': id, 'data-tokens': tokens ?? '', 'data-cost': cost ?? '' });
  g.append(svgText({ x: 0, y: BAR_H, class: 'bar-label' }, label.length > 28 ? `${label.slice(0, 27)}…` : label));
  let x = LABEL_W;
  if (usage) {
    for (const [k, key, words] of SEGMENTS) {
      g.dataset[key.replace(/-(.)/g, (_, c) => c.toUpperCase())] = String(usage[k]);
      const w = usage[k] * scale;
      if (w > 0) g.append(svg('rect', { x, y: 2, width: Math.max(w, 0.5), height: BAR_H, class: `seg seg-${key}` }, tooltip(`${words}: ${fmt(usage[k])} tokens`)));
      x += w;
    }
    const batched = usage.batch ? totalTokens(usage.batch) : 0;
    g.dataset.batch = String(batched);
    if (batched > 0) g.append(svg('rect', { x: LABEL_W, y: BAR_H + 3, width: Math.max(batched * scale, 0.5), height: 3, class: 'seg seg-batch' }, tooltip(`by batch: ${fmt(batched)} tokens`)));
  } else if (tokens) {
    g.append(svg('rect', { x, y: 2, width: Math.max(tokens * scale, 0.5), height: BAR_H, class: 'seg seg-unknown' }, tooltip(`${fmt(tokens)} tokens (no breakdown: it is not in a ledger and not running)`)));
  }
  const share = usage?.batch ? ` · ${Math.round((100 * totalTokens(usage.batch)) / Math.max(tokens, 1))}% batch` : '';
  g.append(svgText({ x: width - NUMBERS_W + 8, y: BAR_H, class: 'bar-numbers' }, `${fmt(tokens ?? 0)} tok · ${usd(cost)}${share}`));
  return g;
}

/** Draws the bars of `graph` (the /api/graph answer) into `container`. */
export function renderBars(container, graph) {
  const width = Math.max(container.clientWidth || 0, 640);
  const nodes = treeOrder(graph.nodes);
  // Ids below the root read without its prefix (`worker-2.helper-3`), as the graph shows them.
  const label = (id) => (id.startsWith(`${graph.rootId}.`) ? id.slice(graph.rootId.length + 1) : id);
  const items = nodes.map((n) => ({ id: n.agentId, label: label(n.agentId), usage: n.counters.usage, tokens: n.counters.totalTokens, cost: n.counters.costUsd, className: 'agent' }));
  // The tree's total: the ledger's, which counts every agent the tree ever ran; else the sum shown.
  const totalUsage = graph.total ? graph.total.usage : sumUsage(items.filter((i) => i.usage).map((i) => i.usage));
  const total = { id: '', label: graph.total ? `tree (${graph.total.agents} agents)` : 'tree (sum of the agents shown)', usage: totalUsage, tokens: totalTokens(totalUsage), cost: graph.total ? graph.total.costUsd : items.reduce((c, i) => c + (i.cost ?? 0), 0), className: 'tree-total' };
  const area = width - LABEL_W - NUMBERS_W;
  const biggest = Math.max(1, ...items.map((i) => i.tokens ?? 0));
  const rows = [bar(0, width, area / Math.max(1, total.tokens), total), ...items.map((i, k) => bar((k + 1) * ROW + 6, width, area / biggest, i))];
  const height = (items.length + 1) * ROW + 12;
  container.replaceChildren(svg('svg', { class: 'bars', width, height, viewBox: `0 0 ${width} ${height}`, role: 'group', 'aria-label': 'tokens and cost by agent' }, ...rows));
}
