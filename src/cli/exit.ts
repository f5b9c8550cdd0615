/** Exit codes (documented in the README's CLI reference) and the error that carries them. */

export const EXIT = {
  /** Done. */
  ok: 0,
  /** Anything else that went wrong (the message says what). */
  failure: 1,
  /** A bad command line or configuration: an unknown option, a malformed value or variable. */
  usage: 2,
  /** No such agent (or schedule). */
  notFound: 3,
  /** `--wait` / `result`: the fork ended failed, killed or timed out. */
  forkNotCompleted: 4,
  /** Temporal could not be reached. */
  unavailable: 5,
} as const;

export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
  }
}
