// The agent list (left pane): the namespace's agents as a forest (an agent under its parent
// when both are listed), each row with its colour, label, origin, state and counters. A
// running agent's counters are live: the server reads them from its tree's ledger or its own
// status (src/cli/web/live-rows.ts), not from search attributes written only at its end.
import { $, COLORS, cls, el, fmt, getJson, plural } from './dom.js';

/** Rows into a forest: an agent hangs under its parent when the parent is listed too. */
function forest(rows) {
  const byId = new Map(rows.map((r) => [r.agentId, { row: r, children: [] }]));
  const roots = [];
  for (const node of byId.values()) {
    const parent = node.row.parentId && byId.get(node.row.parentId);
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  const byStart = (a, b) => a.row.startTime.localeCompare(b.row.startTime);
  const sort = (nodes) => {
    nodes.sort(byStart);
    for (const n of nodes) sort(n.children);
    return nodes;
  };
  return sort(roots);
}

const COUNTER_SOURCE = { ledger: 'live, from its tree’s ledger', status: 'live, from its status', visibility: 'from search attributes (written when it leaves running)' };

function agentItem(node, selected, onSelect) {
  const r = node.row;
  const state = r.state || r.temporalStatus.toLowerCase();
  const button = el('button', '', r.agentId);
  button.type = 'button';
  button.addEventListener('click', () => onSelect(r.agentId));
  const row = el('div', r.agentId === selected ? 'row selected' : 'row', button);
  // Its colour, from its definition: a swatch before its id.
  if (COLORS.has(r.color)) {
    const swatch = el('span', `swatch color-${r.color}`);
    swatch.title = r.color;
    row.prepend(swatch);
  }
  if (r.label) row.append(el('span', 'label', r.label));
  // A fork from a point of its parent: which turn it started from.
  if (r.parentTurn !== undefined && r.parentTurn !== null) row.append(el('span', 'origin', `from turn ${fmt(r.parentTurn)} of ${r.parentId}`));
  row.append(el('span', `state state-${cls(state)}`, state));
  const usage = el('span', 'usage', `${plural(r.turns ?? 0, 'turn')} · ${fmt(r.totalTokens ?? 0)} tokens`);
  usage.title = COUNTER_SOURCE[r.counters] || '';
  usage.dataset.source = r.counters || 'visibility';
  row.append(usage);
  const li = el('li', '', row);
  li.dataset.agentId = r.agentId;
  if (node.children.length) li.append(el('ul', '', ...node.children.map((c) => agentItem(c, selected, onSelect))));
  return li;
}

/** Reads the list (running agents, or all with "show finished") and draws it. */
export async function refreshList(selected, onSelect) {
  try {
    const scope = $('show-finished').checked ? 'all' : 'running';
    const { agents } = await getJson('/api/agents', { scope });
    $('agents').replaceChildren(...forest(agents).map((n) => agentItem(n, selected, onSelect)));
    $('no-agents').hidden = agents.length > 0;
    $('no-agents').textContent = scope === 'running' ? 'No running agents.' : 'No agents.';
    $('list-status').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    $('list-status').textContent = `list failed: ${err.message}`;
  }
}
