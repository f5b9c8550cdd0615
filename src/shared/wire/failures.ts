/**
 * The business failures forkflow's workflows raise, in one place: each type name is a
 * constant, each failure is built by one constructor, and what it carries (`details`) is read
 * back by one reader. Workflows throw these; clients, parents and the dream decode them —
 * never by repeating a string and a cast.
 *
 * The type names are wire values (they are recorded in histories and read by older clients):
 * never rename one.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ForkResult } from './status';

export const FAILURE = {
  /** A fork ended `failed`; `details[0]` is its ForkResult (partial text, usage, children). */
  forkFailed: 'ForkFailed',
  /** A fork's input did not validate; `details[0]` is `{ issues }`. */
  invalidForkInput: 'InvalidForkInput',
  /** A fork's point (`from`: agent, turn, run) cannot be had: unknown agent, turn past the end… */
  invalidForkPoint: 'InvalidForkPoint',
  /** A fork tried to override what its parent's prompt cache is keyed on. */
  cacheUnsafeOverride: 'CacheUnsafeOverride',
  /** A worktree fork could not get its worktree. */
  worktreeUnavailable: 'WorktreeUnavailable',
  /** A named agent's memory directory (definition `memory`) cannot be used: it escapes its workspace, or its index is not a file. */
  agentMemoryUnavailable: 'AgentMemoryUnavailable',
  /** An approval expired under `onTimeout: 'fail'`. */
  approvalTimedOut: 'ApprovalTimedOut',
  /** An approval decision named a request that is not pending (update rejected). */
  unknownApprovalRequest: 'UnknownApprovalRequest',
  /** An approval decision did not validate (update rejected); `details[0]` is `{ issues }`. */
  invalidApprovalDecision: 'InvalidApprovalDecision',
  /** A continuing run's carried state did not parse; `details[0]` is `{ issues }`. */
  invalidCarriedState: 'InvalidCarriedState',
  /** A snapshot did not validate; `details[0]` is `{ issues }`. */
  invalidSnapshot: 'InvalidSnapshot',
  /** An autoDream configuration cannot work; `details[0]` is `{ issues }`. */
  invalidDreamConfig: 'InvalidDreamConfig',
  /** A server in `requiredMcpServers` did not come up (or is not configured): the agent was not started. */
  mcpServerUnavailable: 'McpServerUnavailable',
  /** An interrupt or backgroundChild request did not validate (update rejected); `details[0]` is `{ issues }`. */
  invalidInterrupt: 'InvalidInterrupt',
  /** An interrupt or backgroundChild request found nothing to act on (no turn in flight, no sync sub-agent waited for). */
  nothingToInterrupt: 'NothingToInterrupt',
  /** A scheduled prompt's input did not validate; `details[0]` is `{ issues }`. */
  invalidScheduledPrompt: 'InvalidScheduledPrompt',
  /** A scheduled prompt's agent is closed or unknown: the prompt was not delivered. */
  agentNotRunning: 'AgentNotRunning',
} as const;

export type FailureType = (typeof FAILURE)[keyof typeof FAILURE];

/** A non-retryable failure of one of forkflow's types. */
export function failure(type: FailureType, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, ...(details === undefined ? {} : { details: [details] }) });
}

/** An input that did not validate: the issues travel as details, for clients to show. */
export function invalid(type: FailureType, what: string, issues: string[]): ApplicationFailure {
  return failure(type, `${what}: ${issues.join('; ')}`, { issues });
}

export function forkFailed(result: ForkResult): ApplicationFailure {
  return failure(FAILURE.forkFailed, result.error ?? 'fork failed', result);
}

/** True when `err` is an ApplicationFailure of `type`. */
export function isFailure(err: unknown, type: FailureType): err is ApplicationFailure & { type: FailureType } {
  return err instanceof ApplicationFailure && err.type === type;
}

/** The result a ForkFailed carries, when `err` is one. */
export function forkResultOf(err: unknown): ForkResult | undefined {
  if (!isFailure(err, FAILURE.forkFailed)) return undefined;
  const result = err.details?.[0] as ForkResult | undefined;
  return result && typeof result === 'object' ? result : undefined;
}

/** The issues an `invalid(...)` failure carries (its message when it carries none). */
export function issuesOf(err: ApplicationFailure): string[] {
  const issues = (err.details?.[0] as { issues?: unknown } | undefined)?.issues;
  return Array.isArray(issues) && issues.every((i) => typeof i === 'string') ? issues : [err.message];
}
