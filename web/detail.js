// The selected agent's facts (right pane, top): state, what it is doing now, turns, tool
// calls, tokens and cost, read from the status endpoint; and the page's error line.
import { $, fmt, usageLine } from './dom.js';

const FACTS = ['fact-state', 'fact-activity', 'fact-turns', 'fact-tools', 'fact-tokens', 'fact-cost', 'fact-tree'];

export function fail(message) {
  $('error').hidden = !message;
  $('error').textContent = message || '';
}

/** Clears the facts for a newly selected agent (or none). */
export function resetFacts(agentId) {
  fail('');
  $('facts').hidden = !agentId;
  $('latest').hidden = true;
  $('detail-title').textContent = agentId || 'Select an agent';
  for (const id of FACTS) $(id).textContent = agentId ? '…' : '';
}

/**
 * Shows a status (the /api/status answer). `latestText`: an agent opened after its run ended
 * streams nothing, so its status's last text stands in for the stream.
 */
export function showStatus(s, { latestText }) {
  $('facts').hidden = false;
  $('fact-state').textContent = s.state;
  $('fact-activity').textContent = s.activity || '–';
  $('fact-turns').textContent = `${fmt(s.turns)} / ${fmt(s.maxTurns)}`;
  $('fact-tools').textContent = fmt(s.toolUses);
  $('fact-tokens').textContent = usageLine(s.usage);
  $('fact-cost').textContent = `$${s.tree.costUsd.toFixed(4)}`;
  fail(s.error ? `error: ${s.error}` : '');
  const latest = latestText && s.lastText ? s.lastText : '';
  $('latest').hidden = !latest;
  $('latest-text').textContent = latest;
}

/** The tree line of the facts: its root, how many agents, by state (the graph endpoint's counts). */
export function showTreeFact(graph) {
  const members = graph.nodes.filter((n) => !n.pointFork).length;
  const counts = Object.entries(graph.counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`);
  $('fact-tree').textContent = `${graph.rootId} · ${members} agent(s)${counts.length ? ` · ${counts.join(', ')}` : ''}`;
}
