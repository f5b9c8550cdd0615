/**
 * The web view's inputs, parsed with zod before anything reads them: the query string of
 * each JSON endpoint and the stream's resume point (`Last-Event-ID`). Agent ids arrive from
 * whoever can reach the port, so they are bounded, printable, and free of the characters
 * that could end a quoted literal in a visibility query (the tree endpoint puts the root id
 * into one).
 */
import { z } from 'zod';
import { plainIssues } from '../../shared/base/plain-issues';

/** Longest agent id accepted (the fork input's own limit on `agentId`). */
export const MAX_AGENT_ID = 200;

// No control characters (a header or log line split), no quotes or backslash (a visibility
// query's string literal), nothing else restricted: ids are data, never paths.
const agentId = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_AGENT_ID, `must be at most ${MAX_AGENT_ID} characters`)
  .regex(/^[^\p{Cc}'"\\]*$/u, 'must be printable, without quotes or backslashes');

// A decimal integer with no sign, exponent or fraction: what a seq looks like on the wire.
const seq = z
  .string()
  .regex(/^\d{1,15}$/, 'must be a whole number from 0')
  .transform(Number);

export const agentsQuerySchema = z.strictObject({
  /** `running` (default): agents whose run is open; `all`: the newest agents in any state. */
  scope: z.enum(['running', 'all']).default('running'),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'must be a whole number from 1 to 500')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be from 1 to 500').max(500, 'must be from 1 to 500'))
    .default(200),
});

export const agentQuerySchema = z.strictObject({ agent: agentId });

export const treeQuerySchema = z.strictObject({ root: agentId });

export const streamQuerySchema = z.strictObject({
  agent: agentId,
  /** Where to start when the browser has no `Last-Event-ID` yet (default: the beginning). */
  fromSeq: seq.optional(),
});

export type AgentsQuery = z.infer<typeof agentsQuerySchema>;
export type StreamQuery = z.infer<typeof streamQuerySchema>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Parses a query string against a schema. A repeated parameter is refused rather than
 * resolved (first or last) so a request means one thing.
 */
export function parseQuery<S extends z.ZodType>(schema: S, search: URLSearchParams): Parsed<z.output<S>> {
  const record: Record<string, string> = {};
  for (const [key, value] of search) {
    if (Object.hasOwn(record, key)) return { ok: false, error: `${key}: given more than once` };
    record[key] = value;
  }
  const parsed = schema.safeParse(record);
  if (!parsed.success) return { ok: false, error: plainIssues(parsed.error, 'query').join('; ') };
  return { ok: true, value: parsed.data };
}

/**
 * Where a (re)connecting stream starts: after the last event the browser saw (its
 * `Last-Event-ID`, which the page's EventSource sends on every reconnect), else at
 * `fromSeq`, else at the beginning. An unparsable Last-Event-ID is refused, not ignored: a
 * client that sends one expects no replay of what it already has.
 */
export function resumeSeq(query: StreamQuery, lastEventId: string | string[] | undefined): Parsed<number | undefined> {
  if (lastEventId === undefined) return { ok: true, value: query.fromSeq };
  const parsed = seq.safeParse(Array.isArray(lastEventId) ? lastEventId.join(',') : lastEventId);
  if (!parsed.success) return { ok: false, error: 'Last-Event-ID: must be the whole-number seq of an event' };
  return { ok: true, value: parsed.data + 1 };
}
