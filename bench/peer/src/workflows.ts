/**
 * The bench:peer task written the way @temporalio/ai-sdk's README and samples write an
 * agent: the AI SDK's own `generateText` loop inside a workflow, the model behind
 * `temporalProvider` (each model call an activity), each tool's `execute` an activity, and
 * each sub-agent a child workflow that starts from the conversation it is handed.
 *
 * Prompt caching is switched on as the AI SDK's Anthropic provider documents it (a
 * `cacheControl` provider option on a message): each step marks its last message, so every
 * request writes its prefix and the next one reads it, as forkflow does.
 */
import { executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { generateText, stepCountIs, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import type { createReadActivities } from './activities.ts';

const { readFile } = proxyActivities<ReturnType<typeof createReadActivities>>({ startToCloseTimeout: '1 minute' });

export const MODEL = 'claude-sonnet-5-5';

const tools = {
  Read: tool({
    description: 'Reads a file of the workspace and returns its text.',
    inputSchema: z.object({ file_path: z.string().describe('Path relative to the workspace') }),
    execute: ({ file_path }) => readFile(file_path),
  }),
};

// The messages prepareStep returns are kept for later steps, so earlier marks are cleared:
// the API takes at most 4 breakpoints and the provider drops the ones past that.
const cacheLast = ({ messages }: { messages: ModelMessage[] }) => ({
  messages: messages.map((m, i) => ({ ...m, providerOptions: i === messages.length - 1 ? { anthropic: { cacheControl: { type: 'ephemeral' } } } : undefined })),
});

export interface ReaderInput {
  /** The system prompt (bench/peer.ts gives forkflow the same one). */
  system: string;
  prompt: string;
  maxSteps: number;
  siblings: string[];
}

export interface ReaderResult {
  steps: number;
  siblingIds: string[];
}

/** The agent: reads a file a turn, then hands its whole conversation to each sub-agent. */
export async function readerAgent(input: ReaderInput): Promise<ReaderResult> {
  const messages: ModelMessage[] = [{ role: 'user', content: input.prompt }];
  const result = await generateText({
    model: temporalProvider.languageModel(MODEL),
    system: input.system,
    tools,
    messages,
    stopWhen: stepCountIs(input.maxSteps),
    prepareStep: cacheLast,
  });
  // AI SDK 7: responseMessages holds every step's messages; response.messages only the last step's.
  const conversation = [...messages, ...result.responseMessages];
  const { workflowId } = workflowInfo();
  const siblingIds = input.siblings.map((_, i) => `${workflowId}-sibling-${i}`);
  await Promise.all(input.siblings.map((prompt, i) => executeChild(siblingAgent, { workflowId: siblingIds[i]!, args: [{ system: input.system, conversation, prompt }] })));
  return { steps: result.steps.length, siblingIds };
}

/** A sub-agent: goes on from the conversation it was given, with a directive of its own. */
export async function siblingAgent(input: { system: string; conversation: ModelMessage[]; prompt: string }): Promise<string> {
  const result = await generateText({
    model: temporalProvider.languageModel(MODEL),
    system: input.system,
    tools,
    messages: [...input.conversation, { role: 'user', content: input.prompt }],
    stopWhen: stepCountIs(5),
    prepareStep: cacheLast,
  });
  return result.text;
}
