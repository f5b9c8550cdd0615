/**
 * Parent snapshots for cache tests: a system prompt and tools like a real agent's, a long
 * conversation, and a last assistant turn with one pending tool call per sibling fork (the
 * shape a parent leaves when it forks N siblings in one turn).
 */
import type { MessageParam, ToolDefinition } from '../../src/shared/messages-api/anthropic';
import type { CacheSafeParams } from '../../src/shared/wire/cache-safe-params';
import { toolDefinition } from '../../src/shared/tools/schemas';

/** Deterministic filler text of about `bytes` bytes (≈ bytes/4 tokens by the shared estimate). */
export function filler(bytes: number, seed = 'forkflow'): string {
  const words = ['cache', 'prefix', 'fork', 'turn', 'history', 'workflow', 'signal', 'query', 'replay', 'activity'];
  const out: string[] = [];
  let n = 0;
  let i = seed.length;
  while (n < bytes) {
    const w = words[(i * 7 + n) % words.length]!;
    out.push(w);
    n += w.length + 1;
    i++;
  }
  return out.join(' ').slice(0, bytes);
}

export function bigSnapshot(opts: { conversationBytes: number; pendingToolUses: number; model?: string }): CacheSafeParams {
  const tools: ToolDefinition[] = [toolDefinition('Read'), toolDefinition('Glob'), toolDefinition('Grep'), {
    name: 'Agent',
    description: 'Start a sub-agent with a directive.',
    input_schema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  }];
  const turns = 8;
  const chunk = Math.ceil(opts.conversationBytes / turns);
  const messages: MessageParam[] = [];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: `Background part ${t}:\n${filler(chunk, `part-${t}`)}` });
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `Noted part ${t}.` }] });
  }
  messages.push({ role: 'user', content: 'Split the work across sub-agents.' });
  messages.push({
    role: 'assistant',
    content: [
      { type: 'text', text: 'Starting the sub-agents.' },
      ...Array.from({ length: opts.pendingToolUses }, (_, i) => ({ type: 'tool_use' as const, id: `toolu_agent_${i}`, name: 'Agent', input: { prompt: `part ${i}` } })),
    ],
  });
  return { system: `You are the parent agent.\n${filler(4000, 'system')}`, tools, model: opts.model ?? 'claude-sonnet-5-5', messages, maxTokens: 4096 };
}
