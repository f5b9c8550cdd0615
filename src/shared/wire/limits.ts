/**
 * Limits on every JSON input forkflow takes from outside (a fork's input, a snapshot, a
 * message), checked before anything is stored, hashed or sent: a 5,000-level nesting or a
 * 50 MB prompt is refused with a message that names the limit, never taken in and choked on
 * later (canonical hashing and `JSON.stringify` recurse, and overflow their stack near 5,000
 * levels). The README lists them ("Limits").
 *
 * The walk is iterative (no recursion, whatever the depth) and stops at the first limit
 * passed, so refusing a hostile input costs about as much as reading its first bytes.
 * Workflow-safe: pure code.
 */

/** Nesting of objects and arrays (the outermost value is level 1). */
export const MAX_JSON_DEPTH = 64;
/** Values (objects, arrays, strings, numbers…) in one input. */
export const MAX_JSON_NODES = 1_000_000;
/**
 * Characters of all strings and keys in one fork input or snapshot: the provider refuses
 * requests over 32 MB, so nothing larger could ever be sent.
 */
export const MAX_INPUT_CHARS = 32 * 1024 * 1024;
/** Characters of a fork's prompt (its directive): about a million tokens, more than any model's context. */
export const MAX_PROMPT_CHARS = 4 * 1024 * 1024;
/** Messages of a conversation (a parent snapshot). */
export const MAX_MESSAGES = 100_000;
/** Content blocks of one message, and of one tool result. */
export const MAX_BLOCKS = 10_000;
/** Tool definitions of a request. */
export const MAX_TOOLS = 1_000;
/** Text blocks of a system prompt. */
export const MAX_SYSTEM_BLOCKS = 1_000;

export interface JsonLimits {
  maxDepth: number;
  maxNodes: number;
  maxChars: number;
}

/** The limits of a fork input or snapshot. */
export const INPUT_LIMITS: JsonLimits = Object.freeze({ maxDepth: MAX_JSON_DEPTH, maxNodes: MAX_JSON_NODES, maxChars: MAX_INPUT_CHARS });

const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * Why `value` passes a limit (one line naming the limit), or undefined when it is within all
 * of them. `what` names the input in the message (e.g. `the forkWorkflow input`).
 *
 * @example
 * jsonLimitIssue(JSON.parse('['.repeat(5000) + ']'.repeat(5000)), INPUT_LIMITS)
 * // → 'the input is nested deeper than 64 levels (MAX_JSON_DEPTH)'
 */
export function jsonLimitIssue(value: unknown, limits: JsonLimits = INPUT_LIMITS, what = 'the input'): string | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  let nodes = 0;
  let chars = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (++nodes > limits.maxNodes) return `${what} holds more than ${fmt(limits.maxNodes)} values (MAX_JSON_NODES)`;
    if (typeof v === 'string') chars += v.length;
    else if (v !== null && typeof v === 'object') {
      if (depth > limits.maxDepth) return `${what} is nested deeper than ${fmt(limits.maxDepth)} levels (MAX_JSON_DEPTH)`;
      if (Array.isArray(v)) for (const item of v) stack.push([item, depth + 1]);
      else
        for (const [key, item] of Object.entries(v)) {
          chars += key.length;
          stack.push([item, depth + 1]);
        }
    }
    if (chars > limits.maxChars) return `${what} is larger than ${fmt(limits.maxChars)} characters (MAX_INPUT_CHARS)`;
  }
  return undefined;
}

/**
 * The deepest nesting in JSON text, by its bytes, without parsing it (strings skipped):
 * stops as soon as `max` is passed and returns `max + 1`. For payloads read before anything
 * parses them.
 */
export function jsonTextDepth(bytes: Uint8Array, max: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c) i++; // backslash: skip the escaped byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) {
      if (++depth > deepest) deepest = depth;
      if (deepest > max) return max + 1;
    } else if (b === 0x7d || b === 0x5d) depth--;
  }
  return deepest;
}

/** A limit's message for a string field: the limit and its name. */
export function tooLong(limit: number, name: string): string {
  return `longer than ${fmt(limit)} characters (${name})`;
}
