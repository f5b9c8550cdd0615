/** The client's errors: few, named, and saying what to do instead. */

export class ForkflowError extends Error {
  override name = 'ForkflowError';
}

/** The input failed validation before anything was started. */
export class InvalidForkInputError extends ForkflowError {
  override name = 'InvalidForkInputError';
  constructor(readonly issues: string[]) {
    super(`Invalid fork input:\n- ${issues.join('\n- ')}`);
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

export function isAgentNotFound(err: unknown): err is AgentNotFoundError {
  return err instanceof AgentNotFoundError;
}
