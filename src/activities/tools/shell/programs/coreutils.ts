/**
 * Rules for the small read-mostly programs that have one or two dangerous options:
 * sort (-o, --compress-program), uniq (a second operand is an output file), date
 * (-s, a bare operand sets the clock), hostname (an operand sets the name), printf
 * (-v assigns), test/[ (-v evaluates array subscripts), read (assigns variables),
 * file (-C writes a compiled magic file), tree (-o, -R write files), rg (--pre runs
 * a program per file).
 */
import { checkAssignable } from '../assignments';
import { deny } from '../deny';
import { longTable, refuse, refuseOptions, scanOptions, shortTable, type OptionSpec } from '../options';
import { maySplit, quote, type ShellWord } from '../words';
import type { ProgramRule } from './types';

const SORT: OptionSpec = {
  program: 'sort',
  short: shortTable('bdfgiMhnRrVcCmsuz', 'ktS', {
    o: refuse('`sort -o` writes a file; let sort print to stdout instead'),
    T: refuse('`sort -T` writes temporary files into a directory; leave it out'),
  }),
  long: longTable(
    'ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse version-sort merge stable unique zero-terminated debug help version',
    'random-source sort batch-size files0-from key buffer-size field-separator parallel',
    {
      check: 'optional',
      output: refuse('`sort --output` writes a file; let sort print to stdout instead'),
      'temporary-directory': refuse('`sort --temporary-directory` writes temporary files; leave it out'),
      'compress-program': refuse('`sort --compress-program` runs another program; leave it out'),
    },
  ),
};

const UNIQ: OptionSpec = {
  program: 'uniq',
  short: shortTable('cdDiuz', 'fsw'),
  long: longTable('count repeated ignore-case unique zero-terminated help version', 'skip-fields skip-chars check-chars', {
    'all-repeated': 'optional',
    group: 'optional',
  }),
};

const DATE: OptionSpec = {
  program: 'date',
  short: shortTable('uR', 'dfr', { I: 'optional', s: refuse('`date -s` sets the system clock; use `date` or `date -d ...` to print') }),
  long: longTable('utc universal rfc-email rfc-2822 debug resolution help version', 'date file reference rfc-3339', {
    'iso-8601': 'optional',
    set: refuse('`date --set` sets the system clock; use `date -d ...` to print a date'),
  }),
};

const HOSTNAME_FLAGS = new Set(['-f', '-s', '-i', '-I', '-d', '-A', '--fqdn', '--long', '--short', '--ip-address', '--all-ip-addresses', '--domain', '--all-fqdns']);

function checkSort(args: readonly ShellWord[]): void {
  scanOptions(args, SORT);
}

function checkUniq(args: readonly ShellWord[]): void {
  const { operands } = scanOptions(args, UNIQ);
  if (operands.some((w) => w.kind === 'dynamic' && w.multi)) {
    deny('`uniq` with a glob or unquoted variable could receive two files, and the second is overwritten; name the one input file literally');
  }
  if (operands.length > 1) deny('`uniq INPUT OUTPUT` writes the second file; give uniq one input and read its stdout');
}

function checkDate(args: readonly ShellWord[]): void {
  const { operands } = scanOptions(args, DATE);
  for (const w of operands) {
    if (maySplit(w)) deny(`${quote(w.text)} is an unquoted variable that could split into more date arguments; quote it`);
    const text = w.kind === 'static' ? w.value : w.prefix;
    if (!text.startsWith('+')) deny(`\`date ${w.text}\` would set the system clock; a format must start with +`);
  }
  if (operands.length > 1) deny('`date` takes a single +FORMAT operand');
}

function checkHostname(args: readonly ShellWord[]): void {
  if (args.length === 0) return;
  const only = args[0]!;
  if (args.length === 1 && only.kind === 'static' && HOSTNAME_FLAGS.has(only.value)) return;
  deny('`hostname` with arguments can change the host name; run `hostname` (or `hostname -f`) to print it');
}

/** bash's printf has one option, -v VAR, which assigns (and evaluates subscripts). */
function checkPrintf(args: readonly ShellWord[]): void {
  const first = args[0];
  if (!first) return;
  if (first.kind === 'dynamic' && first.optionLike) deny('`printf` needs a literal format string as its first argument');
  if (first.kind === 'static' && first.value.startsWith('-') && first.value !== '--' && first.value !== '-') {
    deny(first.value.includes('v') ? '`printf -v` assigns a variable; print to stdout instead' : `\`printf ${first.value}\` is not a format; put the format first`);
  }
}

const TEST_BINARY = new Set(['=', '==', '!=', '<', '>', '-eq', '-ne', '-lt', '-le', '-gt', '-ge', '-nt', '-ot', '-ef']);
const NOT = new Set(['!']);
const isStaticIn = (w: ShellWord | undefined, set: ReadonlySet<string>): boolean => w?.kind === 'static' && set.has(w.value);
const isUnaryOp = (w: ShellWord | undefined): boolean => w?.kind === 'static' && (/^-[a-zA-Z]$/.test(w.value) || w.value === '!');

/**
 * `test` and `[`. `-v NAME`/`-R NAME` evaluate an array subscript in NAME, which can
 * run code; and a variable could expand to `-v`. With variables present only the
 * simple shapes where each variable is clearly an operand are accepted.
 */
export function checkTestWords(words: readonly ShellWord[], bracket: boolean): void {
  let args = words;
  if (bracket) {
    const last = args[args.length - 1];
    if (!(last?.kind === 'static' && last.value === ']')) deny('`[` must end with `]`');
    args = args.slice(0, -1);
  }
  for (const w of args) {
    if (w.kind === 'static' && (w.value === '-v' || w.value === '-R')) deny(`\`test ${w.value}\` evaluates array subscripts, which can run code; use -n "$name" instead`);
    if (w.kind === 'dynamic' && w.multi) deny(`${quote(w.text)} could become several test arguments; quote it`);
  }
  if (args.every((w) => w.kind === 'static')) return;
  const [a, b] = args;
  const simple =
    args.length === 1 ||
    (args.length === 2 && isUnaryOp(a)) ||
    (args.length === 3 && (isStaticIn(b, TEST_BINARY) || (isStaticIn(a, NOT) && isUnaryOp(b))));
  if (!simple) deny('with variables, keep a test to one comparison (`[ -f "$f" ]`, `[ "$a" = "$b" ]`)');
}

const READ: OptionSpec = {
  program: 'read',
  short: shortTable('rs', 'dnNtpua', {
    e: refuse('`read -e` uses readline; leave it out'),
    i: refuse('`read -i` uses readline; leave it out'),
  }),
  long: {},
  permute: false,
};

/** `read NAME...` assigns variables: the names go through the assignment rules. */
function checkRead(args: readonly ShellWord[]): void {
  const { options, operands } = scanOptions(args, READ);
  const names = [...operands, ...options.filter((o) => o.name === '-a').map((o) => o.value!)];
  for (const w of names) {
    if (w.kind !== 'static') deny('`read` needs literal variable names');
    checkAssignable(w.value);
  }
}

function checkFile(args: readonly ShellWord[]): void {
  const reason = '`file -C` compiles a magic file and writes it; leave it out';
  refuseOptions(args, 'file', { compile: reason }, { C: reason });
}

function checkTree(args: readonly ShellWord[]): void {
  refuseOptions(args, 'tree', { output: '`tree --output` writes a file; let it print to stdout' }, {
    o: '`tree -o` writes its output to a file; let it print to stdout',
    R: '`tree -R` writes 00Tree.html files into every directory; leave it out',
  });
}

function checkRipgrep(args: readonly ShellWord[]): void {
  const pre = '`rg --pre` runs a program on every file searched; search without it';
  refuseOptions(args, 'rg', { pre, 'pre-glob': pre, 'hostname-bin': '`rg --hostname-bin` runs a program; leave it out' });
}


export const coreutilsRules: Readonly<Record<string, ProgramRule>> = {
  sort: { check: checkSort },
  uniq: { check: checkUniq },
  date: { check: checkDate },
  hostname: { check: checkHostname },
  printf: { check: checkPrintf },
  test: { check: (args) => checkTestWords(args, false) },
  '[': { check: (args) => checkTestWords(args, true) },
  read: { check: checkRead },
  file: { check: checkFile },
  tree: { check: checkTree },
  rg: { check: checkRipgrep },
  // cd only changes the directory later commands run in; no argument makes it write or run.
  cd: { anyArgs: true },
};
