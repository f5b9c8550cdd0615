/**
 * `find`: a positive list of tests and actions. find's expression is a little
 * language whose words all start with `-`, so unlike getopt programs every word is
 * checked where it stands; values of tests (`-size -10k`, `-mtime -7`) are skipped by
 * known arity. `-exec`/`-execdir COMMAND ... ;|+` are allowed when COMMAND, classified
 * like any other command, is read-only: `{}` becomes a path that starts with a starting
 * point (never `-`), one per run with `;`, several with `+`. Refused: -delete, -ok*,
 * -fprint*, -fls, a command whose name holds `{}`, and anything unknown.
 */
import { deny } from '../deny';
import { own } from '../options';
import { mayBeOption, quote, type ShellWord } from '../words';
import type { CommandContext, ProgramRule } from './types';

const NO_VALUE = new Set(
  (
    '-print -print0 -ls -prune -quit -true -false -not -and -or -a -o -depth -d -xdev -mount -noleaf -follow ' +
    '-daystart -ignore_readdir_race -noignore_readdir_race -empty -executable -readable -writable -nouser -nogroup ' +
    '-help --help -version --version -nowarn -warn'
  ).split(' '),
);

const ONE_VALUE = new Set(
  (
    '-name -iname -path -ipath -wholename -iwholename -lname -ilname -regex -iregex -regextype -type -xtype ' +
    '-size -mtime -mmin -atime -amin -ctime -cmin -used -newer -anewer -cnewer -perm -user -group -uid -gid ' +
    '-links -inum -samefile -fstype -maxdepth -mindepth -printf -context'
  ).split(' '),
);

const REFUSED: Readonly<Record<string, string>> = {
  '-delete': '`find -delete` deletes files; list them with `find ... -print` instead',
  '-ok': '`find -ok` runs a command per file; print the paths with find instead',
  '-okdir': '`find -okdir` runs a command per file; print the paths with find instead',
  '-fprint': '`find -fprint` writes a file; use `-print` to print to stdout',
  '-fprint0': '`find -fprint0` writes a file; use `-print0` to print to stdout',
  '-fprintf': '`find -fprintf` writes a file; use `-printf` to print to stdout',
  '-fls': '`find -fls` writes a file; use `-ls` to print to stdout',
};

const OPERATORS = new Set(['(', ')', '!', ',']);

/**
 * The command of `-exec`/`-execdir` starting at `from`; returns the index of its
 * terminator. GNU find ends it at `;`, or at `+` right after a lone `{}`.
 */
function checkExec(args: readonly ShellWord[], from: number, ctx: CommandContext): number {
  let end = from;
  for (; end < args.length; end++) {
    const w = args[end]!;
    if (w.kind !== 'static') continue;
    if (w.value === ';') break;
    const prev = args[end - 1];
    if (w.value === '+' && end > from && prev?.kind === 'static' && prev.value === '{}') break;
  }
  if (end >= args.length) deny('`find -exec` must end with `\\;` or `{} +`');
  const plus = args[end]!.kind === 'static' && (args[end] as { value: string }).value === '+';
  const words = args.slice(from, end);
  const program = words[0];
  if (!program || program.kind !== 'static' || program.value.includes('{}')) {
    deny('the program run by `find -exec` must be a literal name (not `{}`)');
  }
  const replaced = words.map((w): ShellWord => {
    if (w.kind !== 'static' || !w.value.includes('{}')) return w;
    const prefix = w.value.slice(0, w.value.indexOf('{}'));
    return { kind: 'dynamic', prefix, multi: plus, optionLike: prefix.startsWith('-'), split: false, text: w.text };
  });
  if (ctx.depth >= 8) deny('too many nested commands');
  ctx.run(replaced, { ...ctx, exec: true, xargs: false, depth: ctx.depth + 1 });
  return end;
}

function checkFind(args: readonly ShellWord[], ctx: CommandContext): void {
  let i = 0;
  // Global options come before the starting points.
  for (; i < args.length; i++) {
    const w = args[i]!;
    if (w.kind !== 'static') break;
    if (/^-[HLP]$/.test(w.value) || /^-O\d*$/.test(w.value)) continue;
    if (w.value === '-D') {
      if (args[++i]?.kind !== 'static') deny('`find -D` needs a literal debug option list');
      continue;
    }
    break;
  }
  for (; i < args.length; i++) {
    const w = args[i]!;
    if (w.kind === 'static' && OPERATORS.has(w.value)) continue;
    if (!mayBeOption(w)) continue; // a starting point, or a stray word find rejects
    if (w.kind === 'dynamic') {
      deny(`${quote(w.text)} could expand to a find action such as -delete; quote patterns (\`-name '*.ts'\`) and write tests literally`);
    }
    const name = w.value;
    const refused = own(REFUSED, name);
    if (refused) deny(refused);
    if (name === '-exec' || name === '-execdir') {
      i = checkExec(args, i + 1, ctx);
      continue;
    }
    if (NO_VALUE.has(name)) continue;
    if (ONE_VALUE.has(name) || /^-newer[aBcmt][aBcmt]$/.test(name)) {
      const value = args[++i];
      if (!value) deny(`\`find ${name}\` is missing its value`);
      if (value.kind === 'dynamic' && value.multi && value.optionLike) {
        deny(`the value of \`find ${name}\` (${quote(value.text)}) is unquoted and could expand to several words; quote it`);
      }
      continue;
    }
    deny(`\`find ${name}\` is not a test I can verify as read-only; use -name/-path/-type/-print and similar`);
  }
}

export const findRules: Readonly<Record<string, ProgramRule>> = {
  find: { check: checkFind },
};
