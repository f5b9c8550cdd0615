/**
 * Reading a prefix a run holds by reference, for a run about to move to a new build (Worker
 * Versioning): the next run carries the whole conversation inline, so no run of the old build
 * is queried once that build's workers are gone. Runs on the old build, while it still serves.
 */
import type { MessageParam } from '../shared/messages-api/anthropic';
import type { RunRef } from '../shared/prefix/prefix';
import type { HeldConversation } from '../shared/tree/tree-input';
import type { ConversationSource } from './conversation';

export interface ReadHeldInput {
  /** Messages [0, count) of `run`'s conversation, proven by `digest`. */
  prefix: { run: RunRef; count: number; digest: string };
  /** The run that answers `requestContext`, and its context's hash. */
  context: { from: RunRef; contextKey: string };
}

export function createConversationActivities(deps: { conversations: ConversationSource }) {
  return {
    async readHeldConversation(input: ReadHeldInput): Promise<{ context: HeldConversation['context']; messages: MessageParam[] }> {
      const [context, messages] = await Promise.all([
        deps.conversations.context(input.context.from, input.context.contextKey),
        deps.conversations.messages(input.prefix.run, input.prefix.count, input.prefix.digest),
      ]);
      const { system, tools, model, thinking, toolChoice, maxTokens } = context;
      return {
        context: { system, tools, model, maxTokens, ...(thinking ? { thinking } : {}), ...(toolChoice ? { toolChoice: toolChoice as HeldConversation['context']['toolChoice'] } : {}) },
        messages,
      };
    },
  };
}
