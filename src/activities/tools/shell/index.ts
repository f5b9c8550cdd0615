/**
 * Read-only shell command classifier. Unattended memory forks may run `Bash` only when
 * this says the command is read-only, so it is built to hold against a model trying to
 * slip a write or code execution past it: the command is parsed with a real bash
 * grammar (tree-sitter-bash) and cross-checked by a second one (mvdan/sh, agreement.ts),
 * every node and token must be one the walker understands,
 * words must be static where it matters, and programs come from a positive allow-list
 * with per-program option rules. Anything unexpected, including a parse error or an
 * internal error, is a denial.
 */
import { agreementReason, parserDisagreement } from './agreement';
import { deny, isShellDenial } from './deny';
import { parseBash } from './parser';
import { checkText, checkTextAgainstTree } from './source-checks';
import { TreeWalker } from './walk';
import type { WithholdableProgram } from './programs/registry';

/** The classifier's answer; `reason` tells the model what was refused and what to do. */
export type ShellVerdict = { readOnly: true } | { readOnly: false; reason: string };

/**
 * Decide whether a bash command line only reads.
 *
 * @example
 * await classifyShellCommand('grep -rn "rm " src | head -20'); // { readOnly: true }
 * await classifyShellCommand("awk '{print $1}' f", { withhold: ['awk'] }); // refused: awk is withheld
 * await classifyShellCommand('sort -o out.txt in.txt');
 * // { readOnly: false, reason: '`sort -o` writes a file; let sort print to stdout instead' }
 */
export async function classifyShellCommand(command: string, opts: { withhold?: readonly WithholdableProgram[] } = {}): Promise<ShellVerdict> {
  try {
    if (typeof command !== 'string') deny('the command must be a string');
    checkText(command);
    const tree = await parseBash(command);
    try {
      const root = tree.rootNode;
      if (root.hasError) deny('the command could not be parsed as bash (syntax error or incomplete command); fix the syntax');
      // A second, independent parser (mvdan/sh) must read the same structure, so that the
      // tree judged below is the command bash runs. Its verdict is taken first but raised
      // after the walker: a command the walker refuses anyway keeps the walker's more
      // specific reason, and nothing the parsers read differently is ever allowed.
      const disagreement = await parserDisagreement(command, root);
      checkTextAgainstTree(command, root);
      new TreeWalker(command, new Set(opts.withhold ?? [])).statement(root);
      if (disagreement) deny(agreementReason(disagreement));
    } finally {
      tree.delete();
    }
    return { readOnly: true };
  } catch (err) {
    if (isShellDenial(err)) return { readOnly: false, reason: err.reason };
    const message = err instanceof Error ? err.message : String(err);
    return { readOnly: false, reason: `the command could not be checked (${message}), so it is treated as not read-only` };
  }
}
