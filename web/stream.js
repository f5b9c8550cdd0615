// The selected agent's stream (Server-Sent Events, resumed by the browser with Last-Event-ID):
// each turn's thinking, text (as of its live attempt) and tool calls as the model writes them.
// A newer attempt of a turn voids what the older ones streamed (a retried model call).
import { $, el, fmt, short, usageLine } from './dom.js';

const INPUT_PREVIEW_CHARS = 300;

let source; // the EventSource of the selected agent
let view = { turns: new Map(), lastSeq: -1, ended: false }; // what its stream has shown so far

/** Whether the stream ended before showing any turn (an agent opened after its run ended). */
export const endedEmpty = () => view.ended && view.turns.size === 0;

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

const line = (t, className, text) => t.events.append(el('li', className, text));

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

const streamStatus = (text) => ($('stream-status').textContent = text);

export function closeStream() {
  if (source) source.close();
  source = undefined;
}

/** Follows `agentId`'s stream into #turns; `onEnd` when its run is over, `fail` with a message when it broke. */
export function openStream(agentId, { onEnd, fail }) {
  closeStream();
  view = { turns: new Map(), lastSeq: -1, ended: false };
  $('turns').replaceChildren();
  if (!agentId) return;
  streamStatus('connecting');
  const es = new EventSource(`/api/stream?${new URLSearchParams({ agent: agentId })}`);
  source = es;
  es.addEventListener('open', () => source === es && streamStatus('live'));
  es.addEventListener('message', (m) => source === es && apply(JSON.parse(m.data)));
  // The agent's run is over: nothing more will come, so no reconnect.
  es.addEventListener('end', () => {
    if (source !== es) return;
    closeStream();
    view.ended = true;
    streamStatus('ended');
    onEnd();
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
}
