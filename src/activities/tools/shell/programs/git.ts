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
 * --open-files-in-pager runs a program, --textconv runs a configured converter,
 * --show-signature runs gpg. Subcommands that can also modify state (branch, tag,
 * remote, config, stash, worktree, reflog) only accept their listing forms; `remote
 * show` only with -n (otherwise it asks the remote); `describe --dirty/--broken`
 * refresh and may rewrite the index.
 *
 * Format placeholders that verify signatures run gpg (`%G?`, `%GS`, `%GK`... in
 * --format/--pretty, `%(signature...)` in for-each-ref formats), so any argument holding
 * one is refused, and so is a format whose text is not literal. Network subcommands
 * (fetch, pull, push, ls-remote, clone, submodule, archive --remote, bundle...) are
 * simply not on the list; shell-env.ts also sets protocol.allow=never as a second wall.
 */
import { deny } from '../deny';
import { own, refuseOptions } from '../options';
import { quote, type ShellWord } from '../words';
import { gitListingRules } from './git-listing';
import { gitInspectRules } from './inspect';
import type { ProgramRule } from './types';

const OUTPUT = '`git --output` writes a file; let git print to stdout instead';
const EXT_DIFF = '`git --ext-diff` runs an external diff program; leave it out';
const PAGER_EXEC = '`git grep -O`/`--open-files-in-pager` runs a program; print matches instead';
const FILTERS = '`--textconv`/`--filters` run configured conversion programs; leave them out';

/** Long options refused for the log/diff family (git abbreviates, so prefixes too). */
const HISTORY_REFUSED: Readonly<Record<string, string>> = {
  output: OUTPUT,
  'ext-diff': EXT_DIFF,
  textconv: FILTERS,
  'show-signature': '`--show-signature` runs gpg, which writes its own state; leave it out',
};

const DESCRIBE_REFUSED: Readonly<Record<string, string>> = {
  dirty: '`git describe --dirty` refreshes the index and may rewrite it; use `git status --short` to see changes',
  broken: '`git describe --broken` refreshes the index and may rewrite it; use `git status --short` to see changes',
};

const SIGNATURE = 'signature placeholders (%G?, %GS, %GK, %(signature)...) make git run gpg; leave them out of the format';
const FORMAT_NAMES = ['format', 'pretty'];
const isFormatOption = (name: string): boolean => name.length > 0 && FORMAT_NAMES.some((f) => f.startsWith(name));

/** Refuse gpg-running placeholders anywhere, and formats whose text is not literal. */
function checkFormats(args: readonly ShellWord[]): void {
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const text = w.kind === 'static' ? w.value : w.prefix;
    if (/%G|%\(signature/.test(text)) deny(SIGNATURE);
    if (w.kind === 'static') {
      const m = /^--([a-z-]+)$/.exec(w.value);
      const next = args[i + 1];
      if (m && isFormatOption(m[1]!) && next && next.kind !== 'static') deny(`the format after \`${w.value}\` must be literal text; write it out`);
      continue;
    }
    const m = /^--([a-z-]*)=/.exec(w.prefix);
    if (m && isFormatOption(m[1]!)) deny(`the format in ${quote(w.text)} must be literal text; write it out`);
  }
}

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
  describe: (args) => void refuseOptions(args, 'git describe', DESCRIBE_REFUSED),
  'merge-base': plain,
  'for-each-ref': plain,
  'show-ref': plain,
  'name-rev': plain,
  'count-objects': plain,
  'check-ignore': plain,
  'check-attr': plain,
  version: plain,
  cherry: history,
  'range-diff': history,
  'show-branch': plain,
  'verify-pack': plain,
  var: plain,
  // Lists of commands and guides only; `git help CMD` starts man or a browser.
  help: (args) => {
    if (args.length === 0 || !args.every((w) => w.kind === 'static' && /^(-a|--all|-g|--guides|--no-verbose|--no-external-commands|--no-aliases)$/.test(w.value))) {
      deny('only `git help -a` and `git help -g` are read-only; `git help CMD` starts a viewer');
    }
  },
  ...gitListingRules(history),
  ...gitInspectRules,
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
  '--no-lazy-fetch',
  '--no-advice',
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
  const rest = args.slice(i + 1);
  checkFormats(rest);
  rule(rest);
}

export const gitRules: Readonly<Record<string, ProgramRule>> = {
  git: { check: checkGit },
};
