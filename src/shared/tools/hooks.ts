/**
 * Hooks: a service's say in an agent's life. Each configured hook is served by an activity
 * of type `forkflow.hook` on a task queue the service names (./service-contract.ts has the
 * contract); this file says which hooks fire for what. The workflow side
 * (src/workflows/fork/hooks.ts) calls them and applies their answers.
 *
 * Pure and workflow-safe.
 */
import { z } from 'zod';
import { durationSchema } from '../base/duration';
import { schemaOnce } from '../base/schema-once';
import { patternCovers, toolPatternSchema } from './routes';
import type { HookEvent } from './service-contract';

export const HOOK_DEFAULTS = {
  /** A hook's answer is waited for this long (start-to-close). */
  timeout: '10s',
  /** A hook nobody serves fails after this long (schedule-to-start). */
  scheduleToStart: '30s',
} as const;

export const hookEntrySchema = schemaOnce('tools/hooks#hookEntrySchema', () => z.strictObject({
  /** The task queue of the service's worker. */
  taskQueue: z.string().min(1).max(200),
  /** PreToolUse, PostToolUse: the tool names it is called for (a name or a prefix ending in `*`). Default: every tool. */
  matcher: toolPatternSchema.optional(),
  /** How long its answer is waited for. Default 10s. */
  timeout: durationSchema.optional(),
  /** How long it may wait for a worker of its queue. Default 30s. */
  scheduleToStart: durationSchema.optional(),
  /** PreToolUse only: when the hook fails or does not answer, `deny` the call (default: fail closed) or `allow` it. */
  onError: z.enum(['deny', 'allow']).optional(),
}));
export type HookEntry = z.output<typeof hookEntrySchema>;

const entries = schemaOnce('tools/hooks#entries', () => z.array(hookEntrySchema).max(16).optional());

export const hooksSchema = schemaOnce('tools/hooks#hooksSchema', () => z.strictObject({
  PreToolUse: entries,
  PostToolUse: entries,
  SubagentStart: entries,
  SubagentStop: entries,
  Stop: entries,
}));
export type Hooks = z.output<typeof hooksSchema>;

/** The hooks of `event` that apply (to `tool`, for the tool events), in the order configured. */
export function hooksFor(hooks: Hooks | undefined, event: HookEvent, tool?: string): HookEntry[] {
  const list = hooks?.[event] ?? [];
  if (tool === undefined) return list;
  return list.filter((h) => h.matcher === undefined || patternCovers(h.matcher, tool));
}

/** Hooks of two levels, the nearer first: each event's entries of `own`, then `inherited`'s. */
export function mergeHooks(own: Hooks | undefined, inherited: Hooks | undefined): Hooks | undefined {
  if (!own) return inherited;
  if (!inherited) return own;
  const out: Hooks = {};
  for (const e of ['PreToolUse', 'PostToolUse', 'SubagentStart', 'SubagentStop', 'Stop'] as const) {
    const list = [...(own[e] ?? []), ...(inherited[e] ?? [])];
    if (list.length) out[e] = list;
  }
  return out;
}
