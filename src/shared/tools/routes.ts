/**
 * Routes: which tool names a service serves, on which task queue, and what they are. A fork,
 * an agent definition or the client's defaults give a list; the first route whose pattern
 * matches a name wins (an exact name before a prefix, the longest prefix first), and a
 * built-in or sub-agent tool of the same name always wins over any route.
 *
 * Pure and workflow-safe: the tool table (./table.ts) reads them for every call.
 */
import { z } from 'zod';
import { toolDefinitionSchema } from '../messages-api/anthropic';
import { durationSchema, toMs } from '../base/duration';
import { schemaOnce } from '../base/schema-once';

/** A tool name as the provider accepts it, or a prefix of one ending in `*` (`crm_*`, `*`). */
export const toolPatternSchema = schemaOnce('tools/routes#toolPatternSchema', () =>
  z.string().regex(/^(?:\*|[A-Za-z0-9_-]{1,128}\*?)$/, 'a tool name (letters, digits, _ and -) or a prefix ending in *'),
);

/** Defaults of a route, documented in the README ("Your own tools"). */
export const ROUTE_DEFAULTS = {
  /** Each attempt's limit (start-to-close). */
  timeout: '60s',
  /** How long a call waits for a worker of the queue to take it before it is an error: a queue nobody serves. */
  scheduleToStart: '30s',
  /** Attempts of an idempotent tool (a non-idempotent one gets one). */
  maximumAttempts: 3,
  /** Wait before the second attempt; doubles after each. */
  initialInterval: '1s',
  /** The largest result (content, UTF-8 bytes) the model is given. */
  maxResultBytes: 1 << 20,
} as const;

/** The largest `maxResultBytes` a route may set. */
export const MAX_RESULT_BYTES_LIMIT = 4 << 20;

export const routeSchema = schemaOnce('tools/routes#routeSchema', () => z.strictObject({
  /** Tool names this route serves: exact, or a prefix ending in `*`. */
  tools: z.array(toolPatternSchema).min(1).max(1000),
  /** The task queue the service's worker polls. */
  taskQueue: z.string().min(1).max(200),
  /** Changes nothing: read-only agents may call it, it never waits for approval, calls may run side by side. */
  readOnly: z.boolean().default(false),
  /** Running it again after a lost attempt is the same as running it once. Default: `readOnly`. */
  idempotent: z.boolean().optional(),
  /** Each attempt's limit (start-to-close). */
  timeout: durationSchema.default(ROUTE_DEFAULTS.timeout),
  /** The service heartbeats at least this often; a silent attempt is lost sooner than `timeout`. */
  heartbeat: durationSchema.optional(),
  /** How long a call may wait for a worker of the queue; then it is an error result (nobody serves the queue). */
  scheduleToStart: durationSchema.default(ROUTE_DEFAULTS.scheduleToStart),
  /** Attempts of an idempotent tool after a lost or failed attempt (a non-idempotent one always gets one). */
  retry: z
    .strictObject({
      maximumAttempts: z.number().int().min(1).max(10).default(ROUTE_DEFAULTS.maximumAttempts),
      initialInterval: durationSchema.default(ROUTE_DEFAULTS.initialInterval),
    })
    .optional(),
  /** Results larger than this (UTF-8 bytes of the content) reach the model as an error saying so. */
  maxResultBytes: z.number().int().min(1024).max(MAX_RESULT_BYTES_LIMIT).default(ROUTE_DEFAULTS.maxResultBytes),
  /** Tool definitions to offer the model when the agent has no parent snapshot (a snapshot's own tools are offered as they are). */
  definitions: z.array(toolDefinitionSchema).optional(),
}));
export type Route = z.output<typeof routeSchema>;
export type RouteInput = z.input<typeof routeSchema>;

export const routesSchema = schemaOnce('tools/routes#routesSchema', () => z.array(routeSchema).max(200));

/** Whether `pattern` (a name, or a prefix ending in `*`) covers `name`. */
export function patternCovers(pattern: string, name: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

/**
 * The route serving `name`: an exact pattern first, else the longest matching prefix; among
 * equals, the earliest route (so a fork's own routes, listed first, win over inherited ones).
 */
export function routeFor(routes: readonly Route[], name: string): Route | undefined {
  let best: { route: Route; score: number } | undefined;
  for (const route of routes) {
    for (const pattern of route.tools) {
      if (!patternCovers(pattern, name)) continue;
      const score = pattern.endsWith('*') ? pattern.length - 1 : Number.MAX_SAFE_INTEGER;
      if (!best || score > best.score) best = { route, score };
    }
  }
  return best?.route;
}

/** A route's attempt policy as plain numbers (a non-idempotent tool gets exactly one attempt). */
export function attemptPolicy(route: Route): { maximumAttempts: number; initialIntervalMs: number; timeoutMs: number; heartbeatMs?: number; scheduleToStartMs: number } {
  const idempotent = route.idempotent ?? route.readOnly;
  return {
    maximumAttempts: idempotent ? (route.retry?.maximumAttempts ?? ROUTE_DEFAULTS.maximumAttempts) : 1,
    initialIntervalMs: toMs(route.retry?.initialInterval ?? ROUTE_DEFAULTS.initialInterval),
    timeoutMs: toMs(route.timeout),
    ...(route.heartbeat !== undefined ? { heartbeatMs: toMs(route.heartbeat) } : {}),
    scheduleToStartMs: toMs(route.scheduleToStart),
  };
}

/**
 * Routes from every level, most specific first: the fork's own, then its agent definition's,
 * then the client's defaults. `routeFor` prefers the earliest among equally specific matches.
 */
export function mergeRoutes(...levels: (readonly Route[] | undefined)[]): Route[] {
  return levels.flatMap((l) => l ?? []);
}
