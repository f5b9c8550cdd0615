/**
 * Turning a model's raw tool arguments into either parsed input or a message it can act
 * on: nested argument envelopes are refused outright (every built-in tool takes flat
 * scalar fields, and the AutoMem rules deny envelopes), and zod issues are listed in
 * plain words together with the fields the tool expects.
 */
import type { z } from 'zod';

/** Keys models (or adapters) commonly wrap real arguments in. */
const ENVELOPE_KEYS = new Set([
  'arguments', 'args', 'input', 'inputs', 'params', 'parameters', 'tool_input', 'toolInput',
  'kwargs', 'payload', 'data', 'body', 'request',
]);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function looksLikeJsonObject(v: unknown): boolean {
  if (typeof v !== 'string' || !v.trim().startsWith('{')) return false;
  try {
    return isPlainObject(JSON.parse(v));
  } catch {
    return false;
  }
}

/**
 * Describes the envelope if `raw` wraps the real arguments instead of passing them flat,
 * e.g. `{"arguments": {...}}`, `{"input": "{\"file_path\": ...}"}`, `{"FileWrite": {...}}`
 * or a whole JSON string. No built-in tool has an object-valued field, so any object value
 * at the top level is an envelope. Returns `undefined` for flat arguments.
 */
export function detectEnvelope(raw: unknown): string | undefined {
  if (typeof raw === 'string') return 'the arguments are one JSON string instead of an object';
  if (!isPlainObject(raw)) return undefined;
  for (const [key, value] of Object.entries(raw)) {
    if (isPlainObject(value)) return `field "${key}" holds a nested object`;
    if (ENVELOPE_KEYS.has(key) && looksLikeJsonObject(value)) return `field "${key}" holds JSON-encoded arguments`;
  }
  return undefined;
}

function describeFields(schema: z.ZodObject<Record<string, z.ZodType>>): string {
  const required: string[] = [];
  const optional: string[] = [];
  for (const [key, field] of Object.entries(schema.shape)) {
    (field.safeParse(undefined).success ? optional : required).push(key);
  }
  const parts = [`required: ${required.join(', ') || '(none)'}`];
  if (optional.length > 0) parts.push(`optional: ${optional.join(', ')}`);
  return parts.join('; ');
}

/** Plain-words list of zod issues, e.g. for the tool_result of a malformed call. */
export function formatIssues(tool: string, schema: z.ZodObject<Record<string, z.ZodType>>, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
    return `- ${where}${issue.message}`;
  });
  return [
    `Invalid arguments for ${tool}:`,
    ...lines,
    `Expected flat fields (${describeFields(schema)}). Fix the arguments and call ${tool} again.`,
  ].join('\n');
}
