// The web view's page script: no framework, no build step. It polls the JSON endpoints for
// the agent tree and the selected agent's status, and follows the selected agent's stream
// (Server-Sent Events, resumed by the browser with Last-Event-ID). Everything the server
// sends (agent ids, labels, model text) is data: it reaches the page through textContent
// and text nodes only, never as markup.

const LIST_EVERY_MS = 1000;
const STATUS_EVERY_MS = 1000;
// A closed agent's status is answered by a worker replaying its history: asked rarely.
const CLOSED_STATUS_EVERY_MS = 10_000;
const TERMINAL = new Set(['completed', 'failed', 'killed', 'timeout']);
const INPUT_PREVIEW_CHARS = 300;

const $ = (id) => document.getElementById(id);
// An agent definition's colours (seed 001 `color`); anything else is not shown.
const COLORS = new Set(['red', 'orange', 'yellow', 'green', 'cyan', 'blue', 'purple', 'pink']);

/** An element with classes and text children (strings become text nodes, never markup). */
function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children);
  return node;
}

async function getJson(path, params) {
  const res = await fetch(`${path}?${new URLSearchParams(params)}`, { headers: { accept: 'application/json' } });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || `${res.status}`);
  return body;
}

const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '–');
const totalTokens = (u) => u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens + u.outputTokens;
const usageLine = (u) => `${fmt(totalTokens(u))} (in ${fmt(u.inputTokens)}, cache read ${fmt(u.cacheReadInputTokens)}, cache write ${fmt(u.cacheCreationInputTokens)}, out ${fmt(u.outputTokens)})`;

// ---- which agent is selected: kept in the location hash (#agent=<id>), so a reload keeps it ----

function selectedFromHash() {
  return new URLSearchParams(location.hash.slice(1)).get('agent') || undefined;
}

let selected = selectedFromHash();

function select(agentId) {
  if (agentId === selected) return;
  location.hash = new URLSearchParams({ agent: agentId }).toString();
}

window.addEventListener('hashchange', () => {
  const next = selectedFromHash();
  if (next === selected) return;
  selected = next;
  openAgent();
  void refreshList();
});

// ---- the agent tree ----

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

function agentItem(node) {
  const r = node.row;
  const state = r.state || r.temporalStatus.toLowerCase();
  const button = el('button', '', r.agentId);
  button.type = 'button';
  button.addEventListener('click', () => select(r.agentId));
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
  row.append(el('span', `state state-${state.replace(/[^a-z_]/g, '')}`, state));
  // A running agent's counters come from its status (the server fills them); a finished one's from visibility.
  const turns = r.turns ?? 0;
  row.append(el('span', 'usage', `${fmt(turns)} turn${turns === 1 ? '' : 's'} · ${fmt(r.totalTokens ?? 0)} tokens`));
  const li = el('li', '', row);
  li.dataset.agentId = r.agentId;
  if (node.children.length) li.append(el('ul', '', ...node.children.map(agentItem)));
  return li;
}

async function refreshList() {
  try {
    const scope = $('show-finished').checked ? 'all' : 'running';
    const { agents } = await getJson('/api/agents', { scope });
    $('agents').replaceChildren(...forest(agents).map(agentItem));
    $('no-agents').hidden = agents.length > 0;
    $('no-agents').textContent = scope === 'running' ? 'No running agents.' : 'No agents.';
    $('list-status').textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    $('list-status').textContent = `list failed: ${err.message}`;
  }
}

$('show-finished').addEventListener('change', () => void refreshList());

// ---- the selected agent: status and stream ----

let source; // the EventSource of the selected agent
let view; // what its stream has shown so far

function fail(message) {
  $('error').hidden = !message;
  $('error').textContent = message || '';
}

let statusAt = 0; // when the selected agent's status was last asked for
let closed = false; // whether it was in a terminal state then

async function refreshStatus({ polled = false } = {}) {
  const agentId = selected;
  if (!agentId) return;
  if (polled && closed && Date.now() - statusAt < CLOSED_STATUS_EVERY_MS) return;
  statusAt = Date.now();
  try {
    const s = await getJson('/api/status', { agent: agentId });
    if (agentId !== selected) return;
    closed = TERMINAL.has(s.state);
    $('facts').hidden = false;
    $('fact-state').textContent = s.state;
    $('fact-activity').textContent = s.activity || '–';
    $('fact-turns').textContent = `${fmt(s.turns)} / ${fmt(s.maxTurns)}`;
    $('fact-tools').textContent = fmt(s.toolUses);
    $('fact-tokens').textContent = usageLine(s.usage);
    $('fact-cost').textContent = `$${s.tree.costUsd.toFixed(4)}`;
    fail(s.error ? `error: ${s.error}` : '');
    // An agent opened after its run ended streams nothing: its status still has its latest text.
    const latest = view.ended && view.turns.size === 0 && s.lastText ? s.lastText : '';
    $('latest').hidden = !latest;
    $('latest-text').textContent = latest;
    const tree = await getJson('/api/tree', { root: s.rootAgentId });
    if (agentId !== selected) return;
    const counts = Object.entries(tree.counts)
      .filter(([, n]) => n > 0)
      .map(([state, n]) => `${n} ${state}`);
    $('fact-tree').textContent = `${s.rootAgentId} · ${tree.agents.length} agent(s)${counts.length ? ` · ${counts.join(', ')}` : ''}`;
  } catch (err) {
    if (agentId === selected) fail(err.message);
  }
}

/** One turn's section: its thinking, its text (as of its live attempt), its tool calls. */
function turnView(turn) {
  const title = el('h3', '', `turn ${turn}`);
  const thinking = el('pre', 'thinking');
  const text = el('pre', 'text');
  const events = el('ul', 'events');
  const article = el('article', 'turn', title, thinking, text, events);
  article.dataset.turn = String(turn);
  return { article, title, thinking, text, events, attempt: 1, blocks: new Map(), thoughts: new Map(), inputs: new Map(), abandoned: 0 };
}

function turnOf(n) {
  let t = view.turns.get(n);
  if (!t) {
    t = turnView(n);
    view.turns.set(n, t);
    const later = [...view.turns.values()].filter((o) => Number(o.article.dataset.turn) > n).sort((a, b) => a.article.dataset.turn - b.article.dataset.turn)[0];
    $('turns').insertBefore(t.article, later ? later.article : null);
  }
  return t;
}

// Blocks joined by newlines, as the fork's result joins a reply's text blocks.
const joined = (blocks) => [...blocks.entries()].sort(([a], [b]) => a - b).map(([, s]) => s).join('\n');

function renderTurn(t) {
  t.text.textContent = joined(t.blocks);
  t.thinking.textContent = joined(t.thoughts);
  const n = t.article.dataset.turn;
  t.title.textContent = t.attempt > 1 ? `turn ${n} · attempt ${t.attempt} (${t.abandoned} earlier attempt(s) discarded)` : `turn ${n}`;
}

/** A newer attempt of a turn voids what the older ones streamed (a retried model call). */
function raise(t, attempt) {
  if (attempt <= t.attempt) return;
  t.abandoned += attempt - t.attempt;
  t.attempt = attempt;
  t.blocks.clear();
  t.thoughts.clear();
  t.inputs.clear();
}

function line(t, className, text) {
  t.events.append(el('li', className, text));
}

const short = (s, n) => (s.length > n ? `${s.slice(0, n)}…` : s);

function apply(e) {
  if (e.seq <= view.lastSeq) return; // a resumed stream may overlap what was shown
  view.lastSeq = e.seq;
  const t = turnOf(e.turn);
  switch (e.type) {
    case 'turn-start':
    case 'attempt-abandoned':
      raise(t, e.attempt);
      break;
    case 'text-delta':
    case 'thinking-delta':
    case 'tool-input-delta': {
      if (e.attempt < t.attempt) return;
      raise(t, e.attempt);
      const map = e.type === 'text-delta' ? t.blocks : e.type === 'thinking-delta' ? t.thoughts : t.inputs;
      map.set(e.index, (map.get(e.index) || '') + (e.type === 'text-delta' ? e.text : e.type === 'thinking-delta' ? e.thinking : e.partialJson));
      break;
    }
    case 'tool-use':
      line(t, 'tool-use', `→ ${e.name} ${short(JSON.stringify(e.input) ?? '', INPUT_PREVIEW_CHARS)}`);
      break;
    case 'tool-result':
      line(t, e.isError ? 'tool-result error' : 'tool-result', `← ${e.name || e.toolUseId}: ${short(e.preview, INPUT_PREVIEW_CHARS)} (${fmt(e.chars)} chars)`);
      break;
    case 'message':
      line(t, 'message', `✉ ${e.from ? `from ${e.from}: ` : ''}${short(e.summary || e.preview, INPUT_PREVIEW_CHARS)}`);
      break;
    case 'turn-end':
      // The reply whole (when it fits): what the deltas missed, or all of it for a call nobody watched.
      if (typeof e.text === 'string' && e.textChars === e.text.length && e.text !== joined(t.blocks)) t.blocks = new Map([[0, e.text]]);
      line(t, 'turn-end', `turn ended: ${e.stopReason}${e.usage ? ` · ${usageLine(e.usage)} tokens` : ''}`);
      break;
    case 'done':
      line(t, 'done', `done: ${e.status}${e.stopReason ? ` (${e.stopReason})` : ''}${e.error ? ` · ${e.error}` : ''}`);
      break;
  }
  renderTurn(t);
}

function streamStatus(text) {
  $('stream-status').textContent = text;
}

function closeStream() {
  if (source) source.close();
  source = undefined;
}

function openAgent() {
  closeStream();
  view = { turns: new Map(), lastSeq: -1, ended: false };
  closed = false;
  $('latest').hidden = true;
  $('turns').replaceChildren();
  fail('');
  $('facts').hidden = !selected;
  $('detail-title').textContent = selected || 'Select an agent';
  if (!selected) return;
  for (const id of ['fact-state', 'fact-activity', 'fact-turns', 'fact-tools', 'fact-tokens', 'fact-cost', 'fact-tree']) $(id).textContent = '…';
  streamStatus('connecting');
  const es = new EventSource(`/api/stream?${new URLSearchParams({ agent: selected })}`);
  source = es;
  es.addEventListener('open', () => source === es && streamStatus('live'));
  es.addEventListener('message', (m) => {
    if (source !== es) return;
    apply(JSON.parse(m.data));
  });
  // The agent's run is over: nothing more will come, so no reconnect.
  es.addEventListener('end', () => {
    if (source !== es) return;
    closeStream();
    view.ended = true;
    streamStatus('ended');
    void refreshStatus();
  });
  es.addEventListener('stream-error', (m) => {
    if (source !== es) return;
    closeStream();
    streamStatus('failed');
    fail(`stream: ${JSON.parse(m.data).message}`);
  });
  // A dropped connection: the browser reconnects by itself (with Last-Event-ID) unless the
  // server refused it (an unknown agent), which leaves the EventSource closed.
  es.addEventListener('error', () => {
    if (source !== es) return;
    if (es.readyState === EventSource.CLOSED) {
      streamStatus('unavailable');
      closeStream();
    } else streamStatus('reconnecting');
  });
  void refreshStatus();
}

openAgent();
void refreshList();
setInterval(() => void refreshList(), LIST_EVERY_MS);
setInterval(() => void refreshStatus({ polled: true }), STATUS_EVERY_MS);
