/**
 * The scripted model: turns a validated request into the next response, following the
 * instruction lines of the latest user text, or the default explore behaviour (Glob →
 * Read the README → report) when there are none. Pure and deterministic.
 */
import type { MessageParam } from '../../shared/messages-api/anthropic';
import { invalidRequest } from '../errors';
import { toolUseId } from '../ids';
import type { ValidRequest } from '../routes/validation';
import type { OutputBlock } from '../types';
import { allTextLines, directiveLine, exchangesOf, scriptCarrier, stepsTaken, withoutInstructions, type ToolExchange } from './conversation';
import { type Action, type Modifier, type Step, ScriptError, isInstructionLine, parseScript } from './parse';
import { buildReport, listedPaths, withoutLineNumber } from './report';
import { isSummaryRequest, offlineSummary, withoutSummaryRequest } from './summary';
import { isAgentSummaryRequest, offlineAgentSummary } from './agent-summary';

/** What the model answers, before stop sequences, max_tokens and usage are applied. */
export interface ScriptedResponse {
  content: OutputBlock[];
  stopReason: 'end_turn' | 'tool_use';
  /** Modifiers of the step (delays and scripted failures); the server applies them. */
  modifiers: Modifier[];
}

interface Context {
  req: ValidRequest;
  messages: MessageParam[];
  userIndex: number;
  userText: string;
  /** Indexes of the assistant turns already taken since the latest user text. */
  turns: number[];
  conversation: string;
}

/**
 * The scripted response to a request. `conversation` is the request's conversation key
 * (tool-use ids derive from it). Throws a 400 {@link ApiError} for a malformed or
 * exhausted script.
 */
export function scriptedResponse(req: ValidRequest, conversation: string): ScriptedResponse {
  // forkflow's compaction request: the summary, whatever the script says.
  if (isSummaryRequest(req.messages)) return { content: [{ type: 'text', text: offlineSummary(withoutSummaryRequest(req.messages)) }], stopReason: 'end_turn', modifiers: [] };
  // An agent-summary fork's question: a sentence about the work so far, whatever the script says.
  if (isAgentSummaryRequest(req.messages)) return { content: [{ type: 'text', text: offlineAgentSummary(req.messages) }], stopReason: 'end_turn', modifiers: [] };
  const carrier = scriptCarrier(req.messages);
  const { index, text } = carrier;
  let steps: Step[];
  try {
    steps = parseScript(text);
  } catch (e) {
    if (e instanceof ScriptError) throw invalidRequest(e.message);
    throw e;
  }
  const ctx: Context = {
    req,
    messages: req.messages,
    userIndex: index,
    userText: text,
    turns: stepsTaken(req.messages, carrier),
    conversation,
  };
  const step = ctx.turns.length;
  if (steps.length === 0) return explore(ctx, step, []);
  const exploreAt = steps.findIndex((s) => s.action.kind === 'explore');
  if (exploreAt >= 0 && step >= exploreAt) {
    return explore(ctx, step - exploreAt, step === exploreAt ? (steps[exploreAt] as Step).modifiers : []);
  }
  const current = steps[step];
  if (current && current.action.kind !== 'explore') return respond(ctx, current.action, current.modifiers);
  if (step === steps.length && steps[step - 1]?.action.kind === 'tool') return respond(ctx, { kind: 'report' }, []);
  throw exhausted(steps.length, step);
}

function exhausted(steps: number, step: number): Error {
  return invalidRequest(
    `Offline model script exhausted: the latest user text has ${steps} step(s) and this request asks for step ` +
      `${step + 1}. Add instruction lines, end the script with a tool step (a report follows it), or send a new user message.`,
  );
}

function respond(ctx: Context, action: Exclude<Action, { kind: 'explore' }>, modifiers: Modifier[]): ScriptedResponse {
  switch (action.kind) {
    case 'reply':
      return { content: [{ type: 'text', text: action.text }], stopReason: 'end_turn', modifiers };
    case 'echo':
      return { content: [{ type: 'text', text: withoutInstructions(ctx.userText) || '(empty)' }], stopReason: 'end_turn', modifiers };
    case 'report': {
      const report = buildReport(directiveLine(ctx.userText), ctx.turns.flatMap((i): ToolExchange[] => exchangesOf(ctx.messages, i)));
      return { content: [{ type: 'text', text: report }], stopReason: 'end_turn', modifiers };
    }
    case 'recall':
      return { content: [{ type: 'text', text: recall(ctx.messages, action.words) }], stopReason: 'end_turn', modifiers };
    case 'tool': {
      const content: OutputBlock[] = action.calls.map((c, i) => ({
        type: 'tool_use',
        id: toolUseId(ctx.conversation, i),
        name: c.name,
        input: c.input,
      }));
      return { content, stopReason: 'tool_use', modifiers };
    }
  }
}

/** `@recall`: the lines of the conversation (not instructions) that mention `words`, as the model would remember them. */
function recall(messages: MessageParam[], words: string): string {
  const needle = words.toLowerCase();
  const found = [...new Set(allTextLines(messages).filter((l) => !isInstructionLine(l) && l.toLowerCase().includes(needle)).map(withoutLineNumber))];
  return found.length > 0 ? `Recalled: ${found.join(' | ')}` : `Nothing recalled about "${words}".`;
}

const isReadme = (path: string): boolean => (path.split(/[\\/]/).pop() ?? '').toLowerCase() === 'readme.md';

/**
 * The default behaviour, `phase` steps in: Glob "*", then Read the README (or the first
 * listed file), then the report. A failed or empty tool result, or a tool the request
 * does not offer, skips straight to the report.
 */
function explore(ctx: Context, phase: number, modifiers: Modifier[]): ScriptedResponse {
  const offered = new Set((ctx.req.tools ?? []).map((t) => t.name));
  const tool = (name: string, input: Record<string, unknown>): ScriptedResponse =>
    respond(ctx, { kind: 'tool', calls: [{ name, input }] }, modifiers);
  const report = (): ScriptedResponse => respond(ctx, { kind: 'report' }, modifiers);
  if (phase === 0) return offered.has('Glob') ? tool('Glob', { pattern: '*' }) : report();

  const previous = ctx.turns[ctx.turns.length - 1];
  const last = previous === undefined ? undefined : exchangesOf(ctx.messages, previous)[0];
  if (!last) {
    throw invalidRequest(
      'Offline model script exhausted: the default behaviour already answered with its report. ' +
        'Send a new user message to start again.',
    );
  }
  if (last.name === 'Glob' && last.answered && !last.isError && offered.has('Read')) {
    const paths = listedPaths(last.output);
    const pick = paths.find(isReadme) ?? paths[0];
    if (pick) return tool('Read', { file_path: pick });
  }
  return report();
}
