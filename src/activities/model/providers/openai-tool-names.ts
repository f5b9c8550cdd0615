/**
 * Tool names across the two wires. OpenAI's published function name is 1-64 characters of
 * `a-z A-Z 0-9 _ -`; a Messages tool name may run to 128 (an MCP tool is
 * `mcp__<server>__<tool>`, src/shared/tools/mcp.ts), so a longer name would be refused with a
 * 400. Such a name goes out as a stand-in: its first 55 allowed characters, `_`, and 8 hex of
 * its SHA-256. The stand-in is a function of the name alone, so every call of a conversation
 * sends the same bytes (cached prefixes hold), and a tool call that names it is read back as
 * the agent's own tool, from the request's tool list.
 */
import { createHash } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import type { MessagesRequest } from '../../../shared/messages-api/anthropic';

/** What OpenAI's function name allows (FunctionObject.name in its OpenAPI spec). */
const CHAT_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Characters of the name kept before the hash: 55 + `_` + 8 = 64. */
const KEPT = 55;

/** The name `name` goes out as on the Chat Completions wire (itself when OpenAI takes it). */
export function chatToolName(name: string): string {
  if (CHAT_NAME.test(name)) return name;
  const hash = createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 8);
  return `${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, KEPT)}_${hash}`;
}

/** Stand-in → agent name, for the tools of `body` that go out under a stand-in (empty when none do). */
export function agentToolNames(body: Pick<MessagesRequest, 'tools'>): ReadonlyMap<string, string> {
  const back = new Map<string, string>();
  for (const tool of body.tools ?? []) {
    const wire = chatToolName(tool.name);
    if (wire !== tool.name) back.set(wire, tool.name);
  }
  return back;
}

/** `message` with each tool call that names a stand-in renamed to the agent's tool (the same object when none does). */
export function withAgentToolNames(message: Anthropic.Messages.Message, back: ReadonlyMap<string, string>): Anthropic.Messages.Message {
  if (back.size === 0 || !message.content.some((b) => b.type === 'tool_use' && back.has(b.name))) return message;
  const content = message.content.map((b) => (b.type === 'tool_use' && back.has(b.name) ? { ...b, name: back.get(b.name) as string } : b));
  return { ...message, content };
}
