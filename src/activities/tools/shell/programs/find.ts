/**
 * `find`: a positive list of tests and actions. find's expression is a little
 * language whose words all start with `-`, so unlike getopt programs every word is
 * checked where it stands; values of tests (`-size -10k`, `-mtime -7`) are skipped by
 * known arity. Refused: -delete, -exec*, -ok*, -fprint*, -fls, and anything unknown.
 */
import { deny } from '../deny';
import { own } from '../options';
import { mayBeOption, quote, type ShellWord } from '../words';
import type { ProgramRule } from './types';

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
  '-exec': '`find -exec` runs a command per file; print the paths with find and inspect them with a separate read-only command',
  '-execdir': '`find -execdir` runs a command per file; print the paths with find instead',
  '-ok': '`find -ok` runs a command per file; print the paths with find instead',
  '-okdir': '`find -okdir` runs a command per file; print the paths with find instead',
  '-fprint': '`find -fprint` writes a file; use `-print` to print to stdout',
  '-fprint0': '`find -fprint0` writes a file; use `-print0` to print to stdout',
  '-fprintf': '`find -fprintf` writes a file; use `-printf` to print to stdout',
  '-fls': '`find -fls` writes a file; use `-ls` to print to stdout',
};

const OPERATORS = new Set(['(', ')', '!', ',']);

function checkFind(args: readonly ShellWord[]): void {
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
