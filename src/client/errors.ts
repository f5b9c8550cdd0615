/** The client's errors: few, named, and saying what to do instead. */

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

export function isAgentNotFound(err: unknown): err is AgentNotFoundError {
  return err instanceof AgentNotFoundError;
}
