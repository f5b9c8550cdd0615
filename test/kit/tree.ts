/** Building scripted agent trees: Agent calls whose prompts are scripts of their own. */
import type { AgentToolInput } from '../../src/shared/tree/agent-tools';
import { blocksOf, type MessageParam } from '../../src/shared/messages-api/anthropic';

/** `@tool Agent {...}` with the child's script as its prompt. */
export function agentStep(input: Partial<AgentToolInput> & { prompt: string }, modifiers = ''): string {
  return `${modifiers}@tool Agent ${JSON.stringify({ description: 'sub-task', ...input })}`;
}

export function toolStep(name: string, input: unknown, modifiers = ''): string {
  return `${modifiers}@tool ${name} ${JSON.stringify(input)}`;
}

export function script(...lines: string[]): string {
  return lines.join('\n');
}

/** Texts of the task notifications in a conversation. */
export function notificationsIn(messages: MessageParam[]): string[] {
  return messages.flatMap((m) => (m.role === 'user' ? blocksOf(m) : [])).flatMap((b) => (b.type === 'text' && b.text.startsWith('<task-notification>') ? [b.text] : []));
}

/** The tool results in a conversation, parsed when they are JSON. */
export function toolResultsIn(messages: MessageParam[]): { isError: boolean; text: string; json?: Record<string, unknown> }[] {
  return messages
    .flatMap((m) => (m.role === 'user' ? blocksOf(m) : []))
    .flatMap((b) => {
      if (b.type !== 'tool_result') return [];
      const text = typeof b.content === 'string' ? b.content : JSON.stringify(b.content);
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      return [{ isError: Boolean(b.is_error), text, ...(json ? { json } : {}) }];
    });
}
