/** The one error the agent loader throws: its directory could not be listed. */

/** The agents directory is missing, not a directory, or not readable. Bad files never throw. */
export class AgentDirectoryError extends Error {
  override name = 'AgentDirectoryError';
  /** The Node error code (`ENOENT`, `ENOTDIR`, `EACCES`, ...), when there is one. */
  readonly code: string | undefined;

  constructor(
    readonly dir: string,
    cause: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(
      `Cannot read the agents directory ${dir}${code ? ` (${code})` : ''}: check that the configured path exists and is a readable directory.`,
      { cause },
    );
    this.code = code;
  }
}

export function isAgentDirectoryError(err: unknown): err is AgentDirectoryError {
  return err instanceof AgentDirectoryError;
}
