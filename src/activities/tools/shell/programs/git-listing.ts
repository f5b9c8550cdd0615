/**
 * git subcommands that both list and modify, accepted only in their listing forms:
 * `branch` and `tag` (a name operand creates one unless listing), `remote` (-v, show,
 * get-url), `config` (reads only: --get*, --list, one key), `stash list/show`,
 * `worktree list`, `reflog [show]`. Options are positive tables, resolved with git's
 * abbreviation rule, so `--del` or `--unse` cannot sneak a write in.
 */
import { deny } from '../deny';
import { longTable, refuse, scanOptions, shortTable, type OptionSpec } from '../options';
import type { ShellWord } from '../words';

type SubRule = (args: readonly ShellWord[]) => void;

const FILTERS = 'contains no-contains merged no-merged points-at';

const BRANCH: OptionSpec = {
  program: 'git branch',
  short: shortTable('arvqli', '', {
    d: refuse('`git branch -d` deletes a branch; list branches with `git branch -a`'),
    D: refuse('`git branch -D` deletes a branch; list branches with `git branch -a`'),
    m: refuse('`git branch -m` renames a branch; leave it out'),
    M: refuse('`git branch -M` renames a branch; leave it out'),
    c: refuse('`git branch -c` copies a branch; leave it out'),
    C: refuse('`git branch -C` copies a branch; leave it out'),
    f: refuse('`git branch -f` moves a branch; leave it out'),
    u: refuse('`git branch -u` sets upstream; leave it out'),
    t: refuse('`git branch -t` creates a tracking branch; leave it out'),
  }),
  long: longTable('all remotes verbose quiet list ignore-case show-current no-color no-column no-abbrev omit-empty', `sort format ${FILTERS}`, {
    color: 'optional',
    column: 'optional',
    abbrev: 'optional',
    delete: refuse('`git branch --delete` deletes a branch; leave it out'),
    move: refuse('`git branch --move` renames a branch; leave it out'),
    copy: refuse('`git branch --copy` copies a branch; leave it out'),
    force: refuse('`git branch --force` moves a branch; leave it out'),
    'set-upstream-to': refuse('`git branch --set-upstream-to` changes configuration; leave it out'),
    'unset-upstream': refuse('`git branch --unset-upstream` changes configuration; leave it out'),
    'edit-description': refuse('`git branch --edit-description` opens an editor; leave it out'),
    track: refuse('`git branch --track` creates a branch; leave it out'),
    'no-track': refuse('`git branch --no-track` creates a branch; leave it out'),
    'create-reflog': refuse('`git branch --create-reflog` creates a branch; leave it out'),
    recurse: refuse('`git branch --recurse-submodules` creates branches; leave it out'),
  }),
};

const TAG: OptionSpec = {
  program: 'git tag',
  short: shortTable('li', '', {
    n: 'optional',
    a: refuse('`git tag -a` creates a tag; list tags with `git tag -l`'),
    s: refuse('`git tag -s` creates a tag; list tags with `git tag -l`'),
    u: refuse('`git tag -u` creates a tag; list tags with `git tag -l`'),
    d: refuse('`git tag -d` deletes a tag; list tags with `git tag -l`'),
    f: refuse('`git tag -f` replaces a tag; leave it out'),
    m: refuse('`git tag -m` creates a tag; leave it out'),
    F: refuse('`git tag -F` creates a tag; leave it out'),
    e: refuse('`git tag -e` opens an editor; leave it out'),
    v: refuse('`git tag -v` runs gpg to verify; leave it out'),
  }),
  long: longTable('list ignore-case no-column omit-empty', `sort format ${FILTERS}`, {
    color: 'optional',
    column: 'optional',
    annotate: refuse('`git tag --annotate` creates a tag; leave it out'),
    sign: refuse('`git tag --sign` creates a tag; leave it out'),
    'local-user': refuse('`git tag --local-user` creates a tag; leave it out'),
    delete: refuse('`git tag --delete` deletes a tag; leave it out'),
    force: refuse('`git tag --force` replaces a tag; leave it out'),
    message: refuse('`git tag --message` creates a tag; leave it out'),
    file: refuse('`git tag --file` creates a tag; leave it out'),
    edit: refuse('`git tag --edit` opens an editor; leave it out'),
    verify: refuse('`git tag --verify` runs gpg; leave it out'),
    'create-reflog': refuse('`git tag --create-reflog` creates a tag; leave it out'),
  }),
};

const CONFIG_WRITE = '`git config` may only read here (--get, --get-all, --get-regexp, --list, or one key)';
const CONFIG_GETS = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool'];
const CONFIG: OptionSpec = {
  program: 'git config',
  short: shortTable('lz', 'f', { e: refuse('`git config -e` opens an editor; use `git config --list`') }),
  long: longTable(
    'get get-all get-regexp get-urlmatch get-color get-colorbool list show-origin show-scope name-only null global system local worktree includes no-includes bool int bool-or-int path expiry-date',
    'file blob type default',
    {
      edit: refuse('`git config --edit` opens an editor; use `git config --list`'),
      add: refuse(CONFIG_WRITE),
      'replace-all': refuse(CONFIG_WRITE),
      unset: refuse(CONFIG_WRITE),
      'unset-all': refuse(CONFIG_WRITE),
      'rename-section': refuse(CONFIG_WRITE),
      'remove-section': refuse(CONFIG_WRITE),
      fixed: refuse(CONFIG_WRITE),
    },
  ),
};

const has = (names: readonly string[], ...wanted: string[]) => names.some((n) => wanted.includes(n));

function checkBranch(args: readonly ShellWord[]): void {
  const { options, operands } = scanOptions(args, BRANCH);
  const names = options.map((o) => o.name);
  const listing = has(names, '-l', '--list', ...FILTERS.split(' ').map((f) => `--${f}`));
  if (operands.length > 0 && !listing) deny('`git branch NAME` creates a branch; use `git branch --list PATTERN` to list');
}

function checkTag(args: readonly ShellWord[]): void {
  const { options, operands } = scanOptions(args, TAG);
  if (operands.length > 0 && !has(options.map((o) => o.name), '-l', '--list')) {
    deny('`git tag NAME` creates a tag; use `git tag -l PATTERN` to list');
  }
}

function checkConfig(args: readonly ShellWord[]): void {
  const { options, operands } = scanOptions(args, CONFIG);
  const names = options.map((o) => o.name);
  const first = operands[0];
  if (operands.some((w) => w.kind !== 'static')) deny('`git config` arguments must be literal');
  // Newer git: `git config list` / `git config get NAME`.
  if (first?.kind === 'static' && (first.value === 'list' || first.value === 'get')) {
    if (operands.length > (first.value === 'list' ? 1 : 2)) deny(CONFIG_WRITE);
    return;
  }
  if (has(names, '-l', '--list')) {
    if (operands.length > 0) deny(CONFIG_WRITE);
    return;
  }
  // With a --get* action: NAME [VALUE-PATTERN]; with no action, one NAME is a read.
  const max = has(names, ...CONFIG_GETS) ? 2 : 1;
  if (operands.length === 0 || operands.length > max) deny(CONFIG_WRITE);
  if (first?.kind === 'static' && ['set', 'unset', 'rename-section', 'remove-section', 'edit'].includes(first.value)) deny(CONFIG_WRITE);
}

function checkRemote(args: readonly ShellWord[]): void {
  const words = args.map((w) => (w.kind === 'static' ? w.value : null));
  if (words.some((w) => w === null)) deny('`git remote` arguments must be literal');
  const rest = words.filter((w) => w !== '-v' && w !== '--verbose');
  if (rest.length === 0) return;
  // Without -n, `remote show NAME` connects to the remote to list its branches.
  if (rest[0] === 'show') {
    const names = rest.slice(1).filter((w) => w !== '-n');
    if (names.every((w) => !w!.startsWith('-')) && (names.length === 0 || rest.includes('-n'))) return;
    deny('`git remote show NAME` contacts the remote; use `git remote show -n NAME` or `git remote -v`');
  }
  if (rest[0] === 'get-url' && rest.slice(1).every((w) => w === '--push' || w === '--all' || !w!.startsWith('-'))) return;
  deny('only `git remote -v`, `git remote show -n NAME` and `git remote get-url NAME` are read-only');
}

/** `git stash list|show`, `git worktree list`: a listing subcommand is required. */
function listingOnly(name: string, allowed: readonly string[], then: SubRule): SubRule {
  return (args) => {
    const first = args[0];
    if (first?.kind !== 'static' || !allowed.includes(first.value)) {
      deny(`only \`git ${name} ${allowed.join('|')}\` is read-only`);
    }
    then(args.slice(1));
  };
}

/** `git reflog` defaults to `show`; its writing subcommands are refused. */
function reflog(history: SubRule): SubRule {
  return (args) => {
    const first = args[0];
    if (first && first.kind !== 'static') deny('`git reflog` arguments must be literal');
    if (first?.kind === 'static' && ['expire', 'delete', 'drop', 'write'].includes(first.value)) {
      deny(`\`git reflog ${first.value}\` modifies the reflog; use \`git reflog show\``);
    }
    history(first?.kind === 'static' && (first.value === 'show' || first.value === 'exists' || first.value === 'list') ? args.slice(1) : args);
  };
}

/** The listing-form rules; `history` is the log/diff option rule from git.ts. */
export function gitListingRules(history: SubRule): Record<string, SubRule> {
  return {
    branch: checkBranch,
    tag: checkTag,
    config: checkConfig,
    remote: checkRemote,
    stash: listingOnly('stash', ['list', 'show'], history),
    worktree: listingOnly('worktree', ['list'], history),
    notes: listingOnly('notes', ['list', 'show'], history),
    submodule: listingOnly('submodule', ['status'], history),
    reflog: reflog(history),
  };
}
