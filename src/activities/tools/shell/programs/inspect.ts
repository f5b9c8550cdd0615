/**
 * Inspection commands a coding agent reaches for that are read-only only in some forms,
 * each allowed in exactly those forms with every word literal:
 * - `git add -n` / `--dry-run` (lists what would be staged; the index is not written),
 *   `git apply --check | --stat | --numstat | --summary` (reads a patch, applies nothing),
 *   `git fsck` without `--lost-found` (which writes `.git/lost-found`);
 * - `getent DATABASE [KEY...]` without `-s` (a service name picks a library to load);
 * - `man -w | -k | -f` (paths and one-line descriptions: no pager, no preprocessors);
 * - `let` over literal arithmetic, assigning at most a plain, harmless variable.
 */
import { checkAssignable } from '../assignments';
import { deny } from '../deny';
import type { ShellWord } from '../words';
import type { ProgramRule } from './types';

/** The literal values of `words`, or a denial naming `what`. */
function literal(words: readonly ShellWord[], what: string): string[] {
  return words.map((w) => {
    if (w.kind !== 'static') deny(`${what} is allowed only with literal arguments; write \`${w.text}\` out`);
    return w.value;
  });
}

/** Options must come from `allowed` (exact, or `--name=value` for `valued`); the rest are operands. */
function onlyOptions(values: readonly string[], allowed: ReadonlySet<string>, what: string, valued: ReadonlySet<string> = new Set(), numbered = false): void {
  let operands = false;
  for (const v of values) {
    if (operands || v === '-' || !v.startsWith('-')) continue;
    if (v === '--') {
      operands = true;
      continue;
    }
    if (allowed.has(v) || valued.has(v.split('=')[0]!) || (numbered && /^-[pC]\d+$/.test(v))) continue;
    deny(`\`${v}\` is not an option of ${what} that is known to be read-only; leave it out`);
  }
}

const ADD_OPTIONS = new Set(['-n', '--dry-run', '-v', '--verbose', '-A', '--all', '-u', '--update', '--no-all', '--ignore-removal', '-f', '--force', '--ignore-missing', '--sparse']);
const APPLY_MODES = ['--check', '--stat', '--numstat', '--summary'];
const APPLY_OPTIONS = new Set([...APPLY_MODES, '-R', '--reverse', '-v', '--verbose', '-z', '--unidiff-zero', '--ignore-space-change', '--ignore-whitespace', '--recount', '--allow-empty', '--inaccurate-eof']);
const FSCK_OPTIONS = new Set(['--no-dangling', '--dangling', '--unreachable', '--root', '--tags', '--cache', '--no-reflogs', '--full', '--no-full', '--connectivity-only', '--strict', '--verbose', '-v', '--name-objects', '--progress', '--no-progress']);

type SubRule = (args: readonly ShellWord[]) => void;

/** git subcommands added to git.ts's table. */
export const gitInspectRules: Readonly<Record<string, SubRule>> = {
  add: (args) => {
    const values = literal(args, '`git add`');
    if (!values.includes('-n') && !values.includes('--dry-run')) deny('`git add` stages files; only `git add --dry-run` (which lists them) is read-only');
    onlyOptions(values, ADD_OPTIONS, '`git add --dry-run`');
  },
  apply: (args) => {
    // The patch may come from a process substitution (a /dev/fd path that cannot be an option).
    const values = args.map((w) => (w.kind === 'static' ? w.value : w.optionLike || w.split ? deny(`\`git apply\` needs literal options; write \`${w.text}\` out`) : 'patch'));
    if (!values.some((v) => APPLY_MODES.includes(v)) || values.includes('--apply')) {
      deny('`git apply` changes files; only `git apply --check`, `--stat`, `--numstat` or `--summary` (without `--apply`) is read-only');
    }
    onlyOptions(values, APPLY_OPTIONS, '`git apply --check`', new Set(['--exclude', '--include']), true);
  },
  fsck: (args) => onlyOptions(literal(args, '`git fsck`'), FSCK_OPTIONS, '`git fsck`'),
};

const getent: ProgramRule = {
  check: (args) => {
    const values = literal(args, '`getent`');
    onlyOptions(values, new Set(['-i', '--no-idn']), '`getent` (`-s` picks a library to load)');
    if (values.filter((v) => !v.startsWith('-')).length === 0) deny('`getent` needs a database name, e.g. `getent passwd root`');
  },
};

const man: ProgramRule = {
  check: (args) => {
    const [mode, ...rest] = literal(args, '`man`');
    if (!mode || !['-w', '--where', '--path', '-k', '--apropos', '-f', '--whatis'].includes(mode)) {
      deny('`man` runs a pager and formatters; only `man -w`, `man -k` and `man -f` are read-only (or read the page source with cat)');
    }
    if (rest.some((v) => v.startsWith('-'))) deny('`man -w|-k|-f` takes no further options here; leave them out');
  },
};

/** `let` expressions: an optional plain assignment, then numbers and operators only. */
const LET_EXPRESSION = /^\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*[-+*/%]?=(?!=))?[\s0-9+\-*/%()<>=!&|^~?:]*$/;

const letRule: ProgramRule = {
  check: (args) => {
    if (args.length === 0) deny('`let` needs an expression');
    for (const value of literal(args, '`let`')) {
      // The expression part has no names at all: a name's value would itself be evaluated.
      const m = LET_EXPRESSION.exec(value);
      if (!m) deny('`let` may only compute with numbers and operators (names are evaluated as expressions and can run code); compute the value yourself');
      if (m[1]) checkAssignable(m[1]);
    }
  },
};

export const inspectRules: Readonly<Record<string, ProgramRule>> = { getent, man, let: letRule };
