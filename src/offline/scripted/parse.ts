/**
 * Parser of the scripted model's instruction language. An instruction line is a line whose
 * first non-blank character is `@`; each one is a step (one model response) made of zero
 * or more modifiers and exactly one action. See src/offline/README.md for the language.
 */

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

export type Action =
  | { kind: 'reply'; text: string }
  | { kind: 'tool'; calls: ToolCall[] }
  | { kind: 'echo' }
  | { kind: 'report' }
  | { kind: 'recall'; words: string }
  | { kind: 'explore' };

export type Modifier =
  | { kind: 'sleep'; ms: number }
  | { kind: 'pace'; ms: number }
  | { kind: 'fail'; status: number; times: number; retryAfterSeconds?: number }
  | { kind: 'stream-error'; times: number }
  | { kind: 'drop'; times: number }
  /** The reasoning of the step: a thinking block (Messages, with thinking on) or `reasoning_content` (Chat Completions). */
  | { kind: 'think'; text: string };

export interface Step {
  /** The instruction line the step came from (trimmed), for error messages. */
  source: string;
  /** The step alone, without a leading `@repeat N` (what a summary re-writes as the work left). */
  line: string;
  modifiers: Modifier[];
  action: Action;
}

export const ACTIONS = ['reply', 'tool', 'tools', 'echo', 'report', 'recall', 'explore'] as const;
export const MODIFIERS = ['sleep', 'pace', 'fail', 'stream-error', 'drop', 'think'] as const;
export const MAX_REPEAT = 1000;

/** A malformed script. The server answers it with 400 `invalid_request_error`. */
export class ScriptError extends Error {
  override readonly name = 'ScriptError';
}

export function knownInstructions(): string {
  return (
    `actions ${ACTIONS.map((a) => `@${a}`).join(', ')}; ` +
    `modifiers ${MODIFIERS.map((m) => `@${m}`).join(', ')}; macro @repeat`
  );
}

export function isInstructionLine(line: string): boolean {
  return line.trimStart().startsWith('@');
}

/** Parses every instruction line of a user text into steps (other lines are ignored). */
export function parseScript(text: string): Step[] {
  const steps: Step[] = [];
  for (const raw of text.split(/\r?\n/)) {
    if (!isInstructionLine(raw)) continue;
    const line = raw.trim();
    try {
      steps.push(...parseLine(line));
    } catch (e) {
      if (!(e instanceof ScriptError)) throw e;
      throw new ScriptError(`Offline model script error in "${line}": ${e.message} Known instructions: ${knownInstructions()}.`);
    }
  }
  const explore = steps.findIndex((s) => s.action.kind === 'explore');
  if (explore >= 0 && explore !== steps.length - 1) {
    throw new ScriptError(
      `Offline model script error in "${steps[explore]?.source}": @explore runs the default behaviour to the end ` +
        'of the conversation, so it must be the last step.',
    );
  }
  return steps;
}

function parseLine(line: string): Step[] {
  let rest = line;
  let copies = 1;
  const repeat = /^@repeat(?:\s+(\d+))?(?=\s|$)/.exec(rest);
  if (repeat) {
    copies = Number(repeat[1]);
    if (!repeat[1] || copies < 1 || copies > MAX_REPEAT) {
      throw new ScriptError(`@repeat needs a count from 1 to ${MAX_REPEAT}, then the step to repeat.`);
    }
    rest = rest.slice(repeat[0].length).trimStart();
  }
  const stepLine = rest;
  const modifiers: Modifier[] = [];
  for (;;) {
    const m = /^@(\S+)/.exec(rest);
    if (!m) {
      throw new ScriptError(rest === '' ? 'a step needs an action after its modifiers.' : `expected an instruction, found "${rest}".`);
    }
    const name = m[1] as string;
    const after = rest.slice(m[0].length);
    if ((MODIFIERS as readonly string[]).includes(name)) {
      const { modifier, consumed } = parseModifier(name, after);
      modifiers.push(modifier);
      rest = after.slice(consumed).trimStart();
      continue;
    }
    if ((ACTIONS as readonly string[]).includes(name)) {
      const action = parseAction(name, after.trim());
      if (action.kind === 'explore' && copies > 1) throw new ScriptError('@explore cannot be repeated.');
      return Array.from({ length: copies }, () => ({ source: line, line: stepLine, modifiers, action }));
    }
    if (name === 'repeat') throw new ScriptError('@repeat must come first on its line.');
    throw new ScriptError(`unknown instruction "@${name}".`);
  }
}

function parseModifier(name: string, after: string): { modifier: Modifier; consumed: number } {
  const times = (s: string | undefined): number => (s === undefined ? 1 : Number(s));
  if (name === 'sleep') {
    const m = /^\s+(\d+)(?=\s+@|\s*$)/.exec(after);
    if (!m) throw new ScriptError('@sleep needs a delay in milliseconds, e.g. "@sleep 500".');
    return { modifier: { kind: 'sleep', ms: Number(m[1]) }, consumed: m[0].length };
  }
  if (name === 'pace') {
    const m = /^\s+(\d+)(?=\s+@|\s*$)/.exec(after);
    if (!m) throw new ScriptError('@pace needs a delay in milliseconds between streamed events, e.g. "@pace 50".');
    return { modifier: { kind: 'pace', ms: Number(m[1]) }, consumed: m[0].length };
  }
  if (name === 'think') {
    // The reasoning runs to the next instruction on the line.
    const m = /^\s+(.+?)(?=\s+@|\s*$)/.exec(after);
    if (!m) throw new ScriptError('@think needs the reasoning text, e.g. "@think the file is small @reply done".');
    return { modifier: { kind: 'think', text: (m[1] as string).replace(/\\n/g, '\n') }, consumed: m[0].length };
  }
  if (name === 'fail') {
    const m = /^\s+(\d{3})(?:\s+x(\d+))?(?:\s+retry-after=(\d+))?(?=\s+@|\s*$)/.exec(after);
    const status = Number(m?.[1]);
    if (!m || status < 400 || status > 599) {
      throw new ScriptError('@fail needs an HTTP error status, then optionally xN and retry-after=S, e.g. "@fail 429 x2 retry-after=1".');
    }
    const modifier: Modifier = { kind: 'fail', status, times: times(m[2]) };
    if (m[3] !== undefined) modifier.retryAfterSeconds = Number(m[3]);
    return { modifier, consumed: m[0].length };
  }
  const m = /^(?:\s+x(\d+))?(?=\s+@|\s*$)/.exec(after);
  if (!m) throw new ScriptError(`@${name} takes only an optional count such as "x2".`);
  const kind = name === 'drop' ? 'drop' : 'stream-error';
  return { modifier: { kind, times: times(m[1]) }, consumed: m[0].length };
}

function parseAction(name: string, arg: string): Action {
  switch (name) {
    case 'reply':
      if (arg === '') throw new ScriptError('@reply needs the text to reply with.');
      return { kind: 'reply', text: arg.replace(/\\n/g, '\n') };
    case 'recall':
      if (arg === '') throw new ScriptError('@recall needs the words to look for, e.g. "@recall code word".');
      return { kind: 'recall', words: arg };
    case 'tool': {
      const m = /^(\S+)\s+([\s\S]+)$/.exec(arg);
      if (!m) throw new ScriptError('@tool needs a tool name and a JSON object, e.g. @tool Read {"file_path":"README.md"}.');
      return { kind: 'tool', calls: [{ name: m[1] as string, input: parseObject(m[2] as string, '@tool input') }] };
    }
    case 'tools': {
      const list = parseJson(arg, '@tools');
      if (!Array.isArray(list) || list.length === 0) throw new ScriptError('@tools needs a non-empty JSON array of {"name","input"} objects.');
      const calls = list.map((c: unknown, i): ToolCall => {
        const call = c as { name?: unknown; input?: unknown };
        if (typeof call?.name !== 'string' || call.name === '' || !isPlainObject(call.input)) {
          throw new ScriptError(`@tools item ${i} must be {"name": string, "input": object}.`);
        }
        return { name: call.name, input: call.input };
      });
      return { kind: 'tool', calls };
    }
    default:
      if (arg !== '') throw new ScriptError(`@${name} takes no arguments (found "${arg}").`);
      return { kind: name as 'echo' | 'report' | 'explore' };
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new ScriptError(`${what} is not valid JSON (${(e as Error).message}).`);
  }
}

function parseObject(text: string, what: string): Record<string, unknown> {
  const v = parseJson(text, what);
  if (!isPlainObject(v)) throw new ScriptError(`${what} must be a JSON object.`);
  return v;
}
