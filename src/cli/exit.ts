/** Exit codes (documented in the README's CLI reference) and the error that carries them. */

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
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
