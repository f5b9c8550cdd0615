// Shared helpers of the page's modules: building elements (HTML and SVG) from text, never from
// markup; number formats; the JSON endpoints. Everything the server sends is data: it reaches
// the page through textContent, text nodes and attribute values only.

export const $ = (id) => document.getElementById(id);

export const TERMINAL = new Set(['completed', 'failed', 'killed', 'timeout']);
// An agent definition's colours (seed 001 `color`); anything else is not shown.
export const COLORS = new Set(['red', 'orange', 'yellow', 'green', 'cyan', 'blue', 'purple', 'pink']);

/** An element with classes and text children (strings become text nodes, never markup). */
export function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes (values set as attributes, so text stays text) and children. */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

/** An SVG text element holding `text` as a text node. */
export const svgText = (attrs, text) => svg('text', attrs, String(text));

/** A tooltip for an SVG shape: its <title>, as text. */
export const tooltip = (text) => svg('title', {}, String(text));

/** A class name made only of what CSS allows from a state or kind the server sent. */
export const cls = (s) => String(s ?? '').replace(/[^a-z0-9_-]/gi, '');

export const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '–');
export const usd = (n) => (typeof n === 'number' ? `$${n.toFixed(4)}` : '–');
export const totalTokens = (u) => u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens + u.outputTokens;
export const usageLine = (u) => `${fmt(totalTokens(u))} (in ${fmt(u.inputTokens)}, cache read ${fmt(u.cacheReadInputTokens)}, cache write ${fmt(u.cacheCreationInputTokens)}, out ${fmt(u.outputTokens)})`;
export const plural = (n, word) => `${fmt(n)} ${word}${n === 1 ? '' : 's'}`;
export const short = (s, n) => (s.length > n ? `${s.slice(0, n)}…` : s);

export async function getJson(path, params) {
  const res = await fetch(`${path}?${new URLSearchParams(params)}`, { headers: { accept: 'application/json' } });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || `${res.status}`);
  return body;
}

/** A duration in ms as people read it. */
export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
