/** Names and defaults that are part of forkflow's public contract. */

/** Default task queue for fork workflows and their activities. */
export const TASK_QUEUE = 'forkflow';

/** Workflow type names (other SDKs and the `temporal` CLI start them by these names). */
export const WORKFLOW_TYPES = {
  /** One agent: a fork, a named agent or a tree's root (input: the fork input, docs/reference/fork-input.md). */
  fork: 'forkWorkflow',
  /** Records an external parent's snapshot once, for many forks to read by reference (`forkMany`). */
  snapshot: 'snapshotWorkflow',
  /** Consolidates one memory scope (autoDream; input: `forkflow dream schema`). */
  autoDream: 'autoDreamWorkflow',
  /** Started by a prompt Schedule: signals one message to an agent (src/workflows/schedule/). */
  scheduledPrompt: 'scheduledPromptWorkflow',
} as const;

/** The query source that marks a fork child (one half of the recursion guard). */
export const FORK_QUERY_SOURCE = 'agent:builtin:fork';

export const DEFAULTS = {
  model: 'claude-sonnet-5-5',
  maxTurns: 30,
  /** A fork's turn limit unless its caller's `subAgents.forkMaxTurns` says otherwise (seed 003, FORK_AGENT maxTurns). */
  forkMaxTurns: 200,
  /** `max_tokens` of each model call when neither the input nor the parent snapshot says. */
  maxOutputTokens: 8192,
  forkLabel: 'fork',
  /** Bounded records kept in workflow state. */
  rejectedSignalsKept: 20,
} as const;

/** Activity timeouts, one profile per kind of work (a model call and a grep differ). */
export const ACTIVITY_PROFILES = {
  model: { startToCloseMs: 10 * 60_000, heartbeatMs: 2_000 },
  /** Delivery `batch`: the provider answers within 24 hours, or the request expires (then one interactive call). */
  batchModel: { startToCloseMs: 25 * 3_600_000, heartbeatMs: 2_000 },
  tool: { startToCloseMs: 11 * 60_000, scheduleToCloseMs: 60 * 60_000, heartbeatMs: 2_000 },
} as const;
