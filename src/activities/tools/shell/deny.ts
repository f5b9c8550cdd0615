/**
 * The one internal failure type of the classifier. Rules throw a `ShellDenial` with a
 * reason written for the model (what was refused, what to do instead); the entry point
 * turns it into a verdict. Throwing keeps the deep tree walk free of result plumbing,
 * and anything else that is thrown is also a denial (fail closed).
 */

/** Thrown by a rule that refuses the command; `reason` is shown to the model. */
export class ShellDenial extends Error {
  override readonly name = 'ShellDenial';
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Refuse the command with an actionable reason. */
export function deny(reason: string): never {
  throw new ShellDenial(reason);
}

/** Type guard for {@link ShellDenial}. */
export function isShellDenial(err: unknown): err is ShellDenial {
  return err instanceof ShellDenial;
}
