// The web view's page script: no framework, no build step. It wires the page's modules
// together — the agent list (list.js), the selected agent's facts (detail.js), its tree as a
// graph with token and cost bars (graph.js, bars.js), its timeline (timeline.js) and its
// stream (stream.js) — and polls the JSON endpoints. Everything the server sends (agent ids,
// labels, model text) is data: it reaches the page through textContent, text nodes and
// attribute values only, never as markup.
import { $, getJson, plural, TERMINAL } from './dom.js';
import { refreshList } from './list.js';
import { fail, resetFacts, showStatus, showTreeFact } from './detail.js';
import { endedEmpty, openStream } from './stream.js';
import { graphLegend, renderGraph } from './graph.js';
import { barsLegend, renderBars } from './bars.js';
import { renderTimeline, timelineLegend, timelineSummary } from './timeline.js';

const TICK_MS = 1000; // the list and the selected agent's status
// A closed agent's status is answered by a worker replaying its history: asked rarely.
const CLOSED_STATUS_EVERY_MS = 10_000;
// The graph, bars and timeline read visibility and history: every 2 s while something in them runs.
const PICTURE_EVERY_MS = 2000;
const CLOSED_PICTURE_EVERY_MS = 15_000;

// ---- which agent is selected: kept in the location hash (#agent=<id>), so a reload keeps it ----

const selectedFromHash = () => new URLSearchParams(location.hash.slice(1)).get('agent') || undefined;
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
  void refreshList(selected, select);
});

// ---- what is known of the selected agent, and when each part was last read ----

const read = { status: { at: 0, open: true }, graph: { at: 0, open: true }, timeline: { at: 0, open: true } };
const due = (part, polled) => !polled || Date.now() - read[part].at >= (read[part].open ? (part === 'status' ? 0 : PICTURE_EVERY_MS) : part === 'status' ? CLOSED_STATUS_EVERY_MS : CLOSED_PICTURE_EVERY_MS);
const drawn = new Set(); // parts drawn for this selection (each marks the page's timing once)

function firstDraw(part) {
  if (drawn.has(part)) return;
  drawn.add(part);
  // For whoever measures the page (test/e2e/web-view.test.ts prints these): ms since navigation.
  performance.mark(`forkflow:${part}`);
}

async function refreshStatus({ polled = false } = {}) {
  const agentId = selected;
  if (!agentId || !due('status', polled)) return;
  read.status.at = Date.now();
  try {
    const s = await getJson('/api/status', { agent: agentId });
    if (agentId !== selected) return;
    read.status.open = !TERMINAL.has(s.state);
    showStatus(s, { latestText: endedEmpty() });
  } catch (err) {
    if (agentId === selected) fail(err.message);
  }
}

async function refreshGraph({ polled = false } = {}) {
  const agentId = selected;
  if (!agentId || !due('graph', polled)) return;
  read.graph.at = Date.now();
  try {
    const graph = await getJson('/api/graph', { agent: agentId });
    if (agentId !== selected) return;
    read.graph.open = graph.nodes.some((n) => n.temporalStatus === 'RUNNING');
    $('tree-section').hidden = false;
    const members = graph.nodes.filter((n) => !n.pointFork).length;
    const forks = graph.nodes.length - members;
    $('tree-summary').textContent = `${plural(members, 'agent')}${forks ? ` and ${plural(forks, 'fork')} from past turns` : ''} · counters ${graph.total ? 'from the root’s ledger' : 'from each agent'}`;
    renderGraph($('graph'), graph, selected, select);
    firstDraw('graph');
    renderBars($('bars'), graph);
    firstDraw('bars');
    showTreeFact(graph);
  } catch (err) {
    if (agentId === selected) fail(`tree: ${err.message}`);
  }
}

async function refreshTimeline({ polled = false } = {}) {
  const agentId = selected;
  if (!agentId || !due('timeline', polled)) return;
  read.timeline.at = Date.now();
  try {
    const timeline = await getJson('/api/timeline', { agent: agentId });
    if (agentId !== selected) return;
    read.timeline.open = timeline.end === undefined;
    $('timeline-section').hidden = false;
    $('timeline-summary').textContent = timelineSummary(timeline);
    renderTimeline($('timeline'), timeline);
    firstDraw('timeline');
  } catch (err) {
    if (agentId === selected) fail(`timeline: ${err.message}`);
  }
}

function openAgent() {
  for (const part of Object.values(read)) Object.assign(part, { at: 0, open: true });
  drawn.clear();
  resetFacts(selected);
  for (const id of ['tree-section', 'timeline-section']) $(id).hidden = true;
  for (const id of ['graph', 'bars', 'timeline']) $(id).replaceChildren();
  openStream(selected, { onEnd: () => void refreshStatus(), fail });
  // All at once: the tree and the timeline need nothing from the status (a closed agent's status is its slowest read).
  void refreshStatus();
  void refreshGraph();
  void refreshTimeline();
}

$('graph-legend').replaceChildren(graphLegend());
$('bars-legend').replaceChildren(barsLegend());
$('timeline-legend').replaceChildren(timelineLegend());
$('show-finished').addEventListener('change', () => void refreshList(selected, select));
openAgent();
void refreshList(selected, select);
setInterval(() => {
  void refreshList(selected, select);
  void refreshStatus({ polled: true });
  void refreshGraph({ polled: true });
  void refreshTimeline({ polled: true });
}, TICK_MS);
