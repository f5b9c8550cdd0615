/**
 * `git` with read-only subcommands only. Global options are a short positive list:
 * `-c`, `--config-env`, `--exec-path`, `--git-dir`, `--work-tree`, `-p` and the rest are
 * refused (they can point git at other configuration, programs or pagers). Aliases are
 * never expanded because only built-in subcommand names are accepted, and git does not
 * let an alias shadow a built-in.
 *
 * The history/diff subcommands take hundreds of harmless options, so those refuse a
 * short list of dangerous ones (and their abbreviations, which git's option parser
 * accepts): --output writes a file, --ext-diff runs an external diff program, -O /
 * --open-files-in-pager runs a program. Subcommands that can also modify state
 * (branch, tag, remote, config, stash, worktree, reflog) only accept their listing forms.
 */
import { deny } from '../deny';
import { own, refuseOptions } from '../options';
import { quote, type ShellWord } from '../words';
import { gitListingRules } from './git-listing';
import type { ProgramRule } from './types';

const OUTPUT = '`git --output` writes a file; let git print to stdout instead';
const EXT_DIFF = '`git --ext-diff` runs an external diff program; leave it out';
const PAGER_EXEC = '`git grep -O`/`--open-files-in-pager` runs a program; print matches instead';
const FILTERS = '`--textconv`/`--filters` run configured conversion programs; leave them out';

/** Long options refused for the log/diff family (git abbreviates, so prefixes too). */
const HISTORY_REFUSED: Readonly<Record<string, string>> = {
  output: OUTPUT,
  'ext-diff': EXT_DIFF,
  'show-signature': '`--show-signature` runs gpg, which writes its own state; leave it out',
};

type SubRule = (args: readonly ShellWord[]) => void;
const history: SubRule = (args) => void refuseOptions(args, 'git', HISTORY_REFUSED);
const plain: SubRule = (args) => void refuseOptions(args, 'git', {});

const SUBCOMMANDS: Readonly<Record<string, SubRule>> = {
  status: (args) => void refuseOptions(args, 'git status', {}),
  log: history,
  show: history,
  diff: history,
  whatchanged: history,
  shortlog: history,
  'diff-tree': history,
  'diff-index': history,
  'diff-files': history,
  'rev-list': history,
  blame: history,
  annotate: history,
  grep: (args) =>
    void refuseOptions(args, 'git grep', { ...HISTORY_REFUSED, 'open-files-in-pager': PAGER_EXEC, textconv: FILTERS }, { O: PAGER_EXEC }),
  'cat-file': (args) => void refuseOptions(args, 'git cat-file', { textconv: FILTERS, filters: FILTERS }),
  'rev-parse': plain,
  'ls-files': plain,
  'ls-tree': plain,
  describe: plain,
  'merge-base': plain,
  'for-each-ref': plain,
  'show-ref': plain,
  'name-rev': plain,
  'count-objects': plain,
  'check-ignore': plain,
  'check-attr': plain,
  version: plain,
  ...gitListingRules(history),
};

/** Global options accepted before the subcommand; value-taking ones list their arity. */
const GLOBAL_FLAGS = new Set([
  '--no-pager',
  '-P',
  '--no-optional-locks',
  '--literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
  '--no-replace-objects',
]);

const GLOBAL_REFUSED: Readonly<Record<string, string>> = {
  '-c': '`git -c` sets configuration, which can make git run programs; run the command without it',
  '--config-env': '`git --config-env` sets configuration; run the command without it',
  '--exec-path': '`git --exec-path` chooses which programs git runs; leave it out',
  '--git-dir': '`git --git-dir` is not allowed in read-only mode; use `git -C <dir>`',
  '--work-tree': '`git --work-tree` is not allowed in read-only mode; use `git -C <dir>`',
  '-p': '`git -p` starts a pager; leave it out (output is not paged when captured)',
  '--paginate': '`git --paginate` starts a pager; leave it out',
};

function checkGit(args: readonly ShellWord[]): void {
  let i = 0;
  for (; i < args.length; i++) {
    const w = args[i]!;
    if (w.kind !== 'static') deny(`${quote(w.text)} could expand to a git option or subcommand; write it literally`);
    if (!w.value.startsWith('-')) break;
    if (GLOBAL_FLAGS.has(w.value)) continue;
    if (w.value === '-C') {
      const dir = args[++i];
      if (!dir || dir.kind !== 'static') deny('`git -C` needs a literal directory');
      continue;
    }
    if (w.value === '--version' && i === args.length - 1) return;
    const key = w.value.split('=')[0]!;
    deny(own(GLOBAL_REFUSED, key) ?? `\`git ${key}\` is not a global option I can verify as read-only; leave it out`);
  }
  const sub = args[i];
  if (!sub || sub.kind !== 'static') return deny('`git` needs a read-only subcommand such as status, log, diff or show');
  const rule = own(SUBCOMMANDS, sub.value);
  if (!rule) {
    deny(
      `\`git ${sub.value}\` is not a read-only git subcommand (allowed: status, log, show, diff, blame, grep, ls-files, rev-parse, branch/tag listing, ...)`,
    );
  }
  rule(args.slice(i + 1));
}

export const gitRules: Readonly<Record<string, ProgramRule>> = {
  git: { check: checkGit },
};
