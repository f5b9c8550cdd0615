// The selected agent's timeline (SVG), like the Temporal Web UI's but at the agent's level:
// lanes of turns, model calls (compactions and keep-alives among them; batched and failover
// calls marked), tool calls, sub-agents, waits and other work, and marks for messages,
// reports and approvals. The spans are the timeline endpoint's (src/client/timeline-spans.ts,
// mapped from the agent's workflow history); the page only places them on a time axis.
import { cls, duration, el, plural, svg, svgText, tooltip } from './dom.js';

const LANES = [
  ['turns', 'turns'],
  ['model', 'model'],
  ['tools', 'tools'],
  ['sub-agents', 'sub-agents'],
  ['waits', 'waits'],
  ['other', 'other'],
  ['marks', 'messages'],
];
const LEFT = 86;
const ROW = 22; // one row of a lane: overlapping spans (sub-agents, parallel tools) take rows of their own
const SPAN_H = 15;
const MAX_ROWS = 10; // a lane's rows at most; beyond them spans share the row that frees first
const AXIS = 20;
const CHAR_W = 6.4; // an estimate of a label character's width, to keep labels inside their span

/** A tick step (ms) giving at most about eight ticks over `span` ms. */
function step(span) {
  for (const s of [100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000]) if (span / s <= 8) return s;
  return Math.ceil(span / 8 / 3_600_000) * 3_600_000;
}

/** The counts line above the drawing. */
export function timelineSummary(t) {
  const c = t.counts;
  const parts = [plural(c.modelCalls, 'model call'), plural(c.toolCalls, 'tool call'), plural(c.children, 'sub-agent'), plural(c.waits, 'wait'), plural(c.compactions, 'compaction')];
  if (c.keepAlives) parts.push(plural(c.keepAlives, 'keep-alive'));
  if (c.batched) parts.push(`${c.batched} batched`);
  if (c.failovers) parts.push(plural(c.failovers, 'failover call'));
  const span = (t.end ?? t.now) - t.start;
  return `${parts.join(' · ')} · ${duration(span)}${t.end === undefined ? ' so far' : ''}${t.continued ? ' · this run continues an earlier one' : ''}${t.hidden ? ' · content hidden (skipTranscript)' : ''}`;
}

function spanShape(s, x, y, t1) {
  const x1 = x(s.start);
  const x2 = x(s.end ?? t1);
  const w = Math.max(2, x2 - x1);
  const flags = `${s.batch ? ' batch' : ''}${s.fallback ? ' fallback' : ''}${s.end === undefined ? ' open' : ''}`;
  const g = svg('g', { class: `span kind-${cls(s.kind)} outcome-${cls(s.outcome)}${flags}`, 'data-kind': s.kind, 'data-lane': s.lane, 'data-turn': s.turn ?? '' });
  const lasted = duration((s.end ?? t1) - s.start);
  const about = [s.label, `${lasted}${s.end === undefined ? ', still going' : ''}`, s.outcome !== 'ok' ? s.outcome : '', s.attempt ? `attempt ${s.attempt}` : '', s.error || ''].filter(Boolean).join('\n');
  g.append(tooltip(about), svg('rect', { x: x1, y, width: w, height: SPAN_H, rx: 2 }));
  if (w > s.label.length * CHAR_W + 8) g.append(svgText({ x: x1 + 4, y: y + SPAN_H - 4, class: 'span-label' }, s.label));
  return g;
}

/** Each span's row within its lane: the first row free at its start (spans that overlap stack). */
function packRows(spans, t1) {
  const rowOf = new Map();
  const ends = new Map(); // lane → each row's end
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const rows = ends.get(s.lane) ?? [];
    ends.set(s.lane, rows);
    let row = rows.findIndex((end) => end <= s.start);
    if (row < 0 && rows.length < MAX_ROWS) row = rows.length;
    if (row < 0) row = rows.indexOf(Math.min(...rows));
    rows[row] = s.end ?? t1;
    rowOf.set(s, row);
  }
  return rowOf;
}

/** Draws `t` (the /api/timeline answer) into `container`. */
export function renderTimeline(container, t) {
  const width = Math.max(container.clientWidth || 0, 640);
  const t0 = t.start;
  const t1 = Math.max(t.end ?? t.now, t0 + 1);
  const x = (ms) => LEFT + ((ms - t0) / (t1 - t0)) * (width - LEFT - 12);
  const used = LANES.filter(([lane]) => (lane === 'marks' ? t.marks.length > 0 : t.spans.some((s) => s.lane === lane)));
  const rowOf = packRows(t.spans, t1);
  const laneY = new Map();
  let y = AXIS;
  const parts = [];
  for (const [lane, words] of used) {
    const rows = lane === 'marks' ? 1 : Math.max(1, ...t.spans.filter((s) => s.lane === lane).map((s) => rowOf.get(s) + 1));
    laneY.set(lane, y);
    parts.push(svg('rect', { x: 0, y, width, height: rows * ROW, class: 'lane' }), svgText({ x: 4, y: y + ROW / 2 + 4, class: 'lane-label' }, words));
    y += rows * ROW;
  }
  const height = y + 4;
  const every = step(t1 - t0);
  for (let at = 0; t0 + at <= t1; at += every) {
    parts.push(svg('line', { x1: x(t0 + at), x2: x(t0 + at), y1: AXIS - 4, y2: height, class: 'tick' }), svgText({ x: x(t0 + at) + 2, y: 12, class: 'tick-label' }, `+${duration(at)}`));
  }
  for (const s of t.spans) {
    const top = laneY.get(s.lane);
    if (top !== undefined) parts.push(spanShape(s, x, top + rowOf.get(s) * ROW + (ROW - SPAN_H) / 2, t1));
  }
  const my = laneY.get('marks');
  for (const m of t.marks) {
    const mx = x(m.at);
    parts.push(svg('g', { class: `mark mark-${cls(m.kind)}`, 'data-kind': m.kind }, tooltip(`${m.label} · +${duration(m.at - t0)}`), svg('path', { d: `M${mx - 5},${my + 5} L${mx + 5},${my + 5} L${mx},${my + ROW - 5} Z` })));
  }
  if (t.end === undefined) parts.push(svg('line', { x1: x(t.now), x2: x(t.now), y1: AXIS - 4, y2: height, class: 'now' }));
  container.replaceChildren(svg('svg', { class: 'timeline', width, height, viewBox: `0 0 ${width} ${height}`, role: 'group', 'aria-label': `timeline of ${t.agentId}` }, ...parts));
}

/** The legend of the span colours (drawn once). */
export function timelineLegend() {
  const keys = [['model', 'model call'], ['compaction', 'compaction'], ['keep-alive', 'keep-alive'], ['tool', 'tool call'], ['child', 'sub-agent'], ['wait', 'wait'], ['batch', 'batched call'], ['fallback', 'failover call']];
  return el('ul', 'legend', ...keys.map(([kind, words]) => el('li', `span-key key-${kind}`, el('span', 'key-box'), words)));
}
