/**
 * Shared shapes for per-program rules. A rule looks at the words after the program
 * name and throws a denial if any argument vector it allows could write or execute.
 */
import type { ShellWord } from '../words';

export interface CommandContext {
  /** Classify a command another program will run (`env`, `xargs`, `timeout`...). */
  readonly run: (words: readonly ShellWord[], ctx: CommandContext) => void;
  /** The program is started by exec from another program, not by the shell. */
  readonly exec: boolean;
  /** Run by xargs, which appends arguments read from stdin that we never see. */
  readonly xargs: boolean;
  /** Nesting depth of wrappers, bounded to keep `env env env ...` cheap. */
  readonly depth: number;
  /** Programs withheld for this call (seed 000: awk and tee unless the operator allowed them back). */
  readonly withheld: ReadonlySet<string>;
}

export interface ProgramRule {
  /**
   * Every possible argument vector is read-only. Such programs need no option checks
   * and are the only ones `xargs` may run (xargs appends arguments we cannot see).
   */
  readonly anyArgs?: true;
  readonly check?: (args: readonly ShellWord[], ctx: CommandContext) => void;
}
