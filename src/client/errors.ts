/** The client's errors: few, named, and saying what to do instead. */

/** The base of the client's errors. */
export class ForkflowError extends Error {
  override name = 'ForkflowError';
}

/** Input that failed validation before anything was started; `issues` lists every problem. */
export class InvalidInputError extends ForkflowError {
  override name = 'InvalidInputError';
  constructor(what: string, readonly issues: string[]) {
    super(`Invalid ${what}:\n- ${issues.join('\n- ')}`);
  }
}

/** The fork input failed validation. */
export class InvalidForkInputError extends InvalidInputError {
  override name = 'InvalidForkInputError';
  constructor(issues: string[]) {
    super('fork input', issues);
  }
}

/** No agent with this id (never started, or its history is past retention). */
export class AgentNotFoundError extends ForkflowError {
  override name = 'AgentNotFoundError';
  constructor(readonly agentId: string) {
    super(`No agent "${agentId}" found: check the id with \`forkflow list\`; closed agents are kept only for the namespace's retention period.`);
  }
}

/** A fire-and-forget handle's result can be taken once. */
export class ResultAlreadyTakenError extends ForkflowError {
  override name = 'ResultAlreadyTakenError';
  constructor(readonly agentId: string) {
    super(`The result of ${agentId} was already taken from this handle; use client.result("${agentId}") to read it again.`);
  }
}

function seconds(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

/**
 * Temporal could not be reached for the whole outage deadline (`outage.deadlineMs`, default
 * 5 minutes); `detail` is the last gRPC error. Nothing was lost: a running fork carries on
 * on the server, and its result can be read again once the server answers.
 */
export class TemporalUnavailableError extends ForkflowError {
  override name = 'TemporalUnavailableError';
  constructor(
    readonly address: string,
    readonly waitedMs: number,
    readonly deadlineMs: number,
    /** The last UNAVAILABLE error's message (e.g. `connect ECONNREFUSED`), when there was one. */
    readonly detail: string | undefined,
    opts?: { cause?: unknown },
  ) {
    super(
      `Temporal at ${address} did not answer for ${seconds(waitedMs)} (outage deadline ${seconds(deadlineMs)}${detail ? `; last error: ${detail}` : ''}). ` +
        `Check that the server at ${address} is running and reachable; running forks carry on there, and their results can be read once it answers.`,
      opts,
    );
  }
}

export function isTemporalUnavailable(err: unknown): err is TemporalUnavailableError {
  return err instanceof TemporalUnavailableError;
}

export function isAgentNotFound(err: unknown): err is AgentNotFoundError {
  return err instanceof AgentNotFoundError;
}

/**
 * A point of an agent's past that cannot be had (a negative turn, a turn past the end, a run of
 * another agent, a workflow that is no agent); nothing was started. `problem` names which.
 */
export class InvalidForkPointError extends InvalidInputError {
  override name = 'InvalidForkPointError';
  constructor(
    readonly problem: string,
    message: string,
  ) {
    super('fork point', [message]);
  }
}

/** An agent that cannot be retried (still running, finished its task, a sub-agent of a tree with a ledger…); nothing was started. */
export class RetryRefusedError extends InvalidInputError {
  override name = 'RetryRefusedError';
  constructor(
    readonly agentId: string,
    reason: string,
  ) {
    super('retry', [reason]);
  }
}
