/**
 * The scripted model's answer to forkflow's agent-summary request (src/shared/agents/agent-summary.ts):
 * deterministic, from the conversation before the request, and like a real answer in kind — what
 * the agent was asked, the tool calls it has made by name, and the last thing it said.
 */
import { blocksOf, type MessageParam } from '../../shared/messages-api/anthropic';
import { isAgentSummaryText } from '../../shared/agents/agent-summary';
import { FORK_TAG } from '../../shared/prefix/fork-messages';
import { isInstructionLine } from './parse';

/** Whether the request's last user turn asks for an agent summary. */
export function isAgentSummaryRequest(messages: MessageParam[]): boolean {
  const last = messages[messages.length - 1];
  return last?.role === 'user' && blocksOf(last).some((b) => b.type === 'text' && isAgentSummaryText(b.text));
}

/** The first plain line of the agent's own task (its first user text, fork boilerplate and script lines left out). */
function taskLine(messages: MessageParam[]): string {
  for (const m of messages) {
    if (m.role !== 'user') continue;
    for (const b of blocksOf(m)) {
      if (b.type !== 'text' || b.text.includes(`<${FORK_TAG}>`)) continue;
      const line = b.text.split('\n').map((l) => l.trim()).find((l) => l !== '' && !isInstructionLine(l));
      if (line) return line;
    }
  }
  return 'the task it was given';
}

/** The summary: `Working on <task>; tool calls so far: Glob ×1, Bash ×2; last said: <text>.` */
export function offlineAgentSummary(messages: MessageParam[]): string {
  const before = messages.slice(0, -1);
  const counts = new Map<string, number>();
  let lastText: string | undefined;
  for (const m of before) {
    if (m.role !== 'assistant') continue;
    for (const b of blocksOf(m)) {
      if (b.type === 'tool_use') counts.set(b.name, (counts.get(b.name) ?? 0) + 1);
      if (b.type === 'text' && b.text.trim()) lastText = b.text.trim().split('\n')[0];
    }
  }
  const calls = [...counts].map(([name, n]) => `${name} ×${n}`).join(', ') || 'none';
  return `Working on ${taskLine(before)}; tool calls so far: ${calls}${lastText ? `; last said: ${lastText}` : ''}.`;
}
