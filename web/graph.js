// The tree as a graph (SVG): one box per agent with its state and live counters, laid out
// left to right by depth, each edge labelled by how the parent started the child — fork,
// named agent, general-purpose, teammate, from a past turn; remote when it runs on another
// task queue. The labels and counters are the graph endpoint's (src/client/graph.ts); the
// page only draws them. Clicking a box selects that agent.
import { cls, el, fmt, svg, svgText, tooltip } from './dom.js';

const W = 214; // a box's width
const H = 38; // a box's height
const COL = W + 130; // from one depth's boxes to the next (room for the edge labels)
const ROW = 48; // from one leaf row to the next
const PAD = 8;

const KINDS = [
  ['fork', 'fork (shares its parent’s context)'],
  ['named', 'named agent type'],
  ['general', 'general-purpose'],
  ['teammate', 'teammate'],
  ['from-turn', 'from a past turn'],
  ['remote', 'remote (another task queue)'],
];

/** The page's legend for edge kinds (drawn once). */
export function graphLegend() {
  return el('ul', 'legend', ...KINDS.map(([kind, words]) => el('li', `edge-key kind-${kind}`, el('span', 'key-line'), words)));
}

/** The part of an id after its parent's (`root.worker-2` under `root` reads `worker-2`). */
const shortId = (n) => (n.parentId && n.agentId.startsWith(`${n.parentId}.`) ? n.agentId.slice(n.parentId.length + 1) : n.agentId);

/** Positions: depth → column, leaves → rows in tree order, a parent beside the middle of its children. */
function layout(nodes) {
  const byId = new Map(nodes.map((n) => [n.agentId, n]));
  const children = new Map();
  const roots = [];
  for (const n of nodes) {
    if (n.parentId && byId.has(n.parentId) && n.parentId !== n.agentId) {
      if (!children.has(n.parentId)) children.set(n.parentId, []);
      children.get(n.parentId).push(n);
    } else roots.push(n);
  }
  const order = (a, b) => (a.pointFork ? 1 : 0) - (b.pointFork ? 1 : 0) || a.startTime.localeCompare(b.startTime) || a.agentId.localeCompare(b.agentId);
  const pos = new Map();
  const preorder = []; // parents before their children, as the bars list them
  let row = 0;
  let maxDepth = 0;
  const seen = new Set();
  const place = (n, depth) => {
    seen.add(n.agentId);
    preorder.push(n);
    maxDepth = Math.max(maxDepth, depth);
    const kids = (children.get(n.agentId) || []).filter((k) => !seen.has(k.agentId)).sort(order);
    if (kids.length === 0) {
      pos.set(n.agentId, { x: depth * COL, y: row++ * ROW });
      return;
    }
    for (const k of kids) place(k, depth + 1);
    const ys = kids.map((k) => pos.get(k.agentId).y);
    pos.set(n.agentId, { x: depth * COL, y: (Math.min(...ys) + Math.max(...ys)) / 2 });
  };
  for (const r of roots.sort(order)) place(r, 0);
  return { pos, preorder, width: maxDepth * COL + W + 2 * PAD, height: Math.max(row, 1) * ROW + 2 * PAD };
}

function edge(n, from, to) {
  const x1 = from.x + W + PAD;
  const y1 = from.y + H / 2 + PAD;
  const x2 = to.x + PAD;
  const y2 = to.y + H / 2 + PAD;
  const mid = (x1 + x2) / 2;
  const kind = cls(n.start.kind);
  const g = svg('g', { class: `edge kind-${kind}${n.start.remote ? ' remote' : ''}`, 'data-child': n.agentId, 'data-edge-kind': n.start.kind, 'data-edge-label': n.start.label });
  g.append(svg('path', { d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}` }), svgText({ x: x2 - 6, y: y2 - 5, 'text-anchor': 'end', class: 'edge-label' }, n.start.label));
  return g;
}

function box(n, at, selected, onSelect) {
  const c = n.counters || {};
  const state = n.state;
  const g = svg('g', {
    class: `node state-${cls(state)}${n.agentId === selected ? ' selected' : ''}${n.pointFork ? ' point-fork' : ''}`,
    transform: `translate(${at.x + PAD},${at.y + PAD})`,
    tabindex: 0,
    role: 'button',
    'data-agent-id': n.agentId,
    'data-state': state,
    'data-turns': c.turns ?? '',
    'data-tokens': c.totalTokens ?? '',
    'data-source': c.source || '',
  });
  const counters = `${fmt(c.turns ?? 0)} turn${c.turns === 1 ? '' : 's'} · ${fmt(c.totalTokens ?? 0)} tok`;
  g.append(
    tooltip(`${n.agentId}${n.name ? ` (${n.name})` : ''}${n.label ? ` · ${n.label}` : ''}\n${state} · ${counters}${c.costUsd !== undefined ? ` · $${c.costUsd.toFixed(4)}` : ''}\nstarted as: ${n.start.label}${n.taskQueue ? `\ntask queue: ${n.taskQueue}` : ''}\ncounters: ${c.source}`),
    svg('rect', { width: W, height: H, rx: 6, class: 'box' }),
    svgText({ x: 8, y: 15, class: 'node-id' }, shortId(n).length > 30 ? `${shortId(n).slice(0, 29)}…` : shortId(n)),
    svgText({ x: 8, y: 31, class: 'node-counters' }, `${state} · ${counters}`),
  );
  const choose = () => onSelect(n.agentId);
  g.addEventListener('click', choose);
  g.addEventListener('keydown', (e) => (e.key === 'Enter' || e.key === ' ') && choose());
  return g;
}

/** The nodes in tree order: each parent, then its children's subtrees in the graph's order (the bars list them so). */
export function treeOrder(nodes) {
  return layout(nodes).preorder;
}

/** Draws `graph` (the /api/graph answer) into `container`. */
export function renderGraph(container, graph, selected, onSelect) {
  const { pos, width, height } = layout(graph.nodes);
  const edges = svg('g', { class: 'edges' });
  const boxes = svg('g', { class: 'nodes' });
  for (const n of graph.nodes) {
    const at = pos.get(n.agentId);
    if (!at) continue;
    const parent = n.parentId && pos.get(n.parentId);
    if (parent) edges.append(edge(n, parent, at));
    boxes.append(box(n, at, selected, onSelect));
  }
  const picture = svg('svg', { class: 'graph', width, height, viewBox: `0 0 ${width} ${height}`, role: 'group', 'aria-label': `agent tree of ${graph.rootId}` }, edges, boxes);
  container.replaceChildren(picture);
}
