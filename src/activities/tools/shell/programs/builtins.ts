/**
 * Bash builtins that report on the shell (`set`, `shopt`, `trap -p`, `hash`, `alias`,
 * `compgen -c`...) in their printing forms only, and small text tools with a writing
 * option refused (`tee` only to /dev/null, `iconv`/`shuf` without -o). The refused
 * forms are the ones that change how later text is read or what runs: `set -k` turns
 * arguments into environment assignments, `shopt -s extglob` changes the grammar,
 * `hash -p` maps a name to any file, `trap`/`compgen -W/-C/-F` and `jobs -x` run code,
 * `enable -f` loads a shared object, `history -w/-a` write files.
 */
import { checkAssignable } from '../assignments';
import { deny } from '../deny';
import { refuseOptions } from '../options';
import { quote, type ShellWord } from '../words';
import type { CommandContext, ProgramRule } from './types';

function literal(args: readonly ShellWord[], program: string): string[] {
  return args.map((w) => {
    if (w.kind !== 'static') deny(`\`${program}\` arguments must be literal here; ${quote(w.text)} is not`);
    return w.value;
  });
}

// xtrace/verbose are left out: xtrace expands PS4 before every command.
const SET_FLAGS = /^[-+][eufCEBhn]+$/;
const SET_OPTIONS = new Set(['pipefail', 'errexit', 'nounset', 'noglob', 'noclobber', 'errtrace', 'braceexpand', 'hashall']);

/** `set` prints variables, `set -o` prints options; a few harmless options may change. */
function checkSet(args: readonly ShellWord[]): void {
  const words = literal(args, 'set');
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--' || w === '-') return; // the rest are positional parameters
    if (w === '-o' || w === '+o') {
      const name = words[i + 1];
      if (name === undefined) return;
      if (!SET_OPTIONS.has(name)) deny(`\`set -o ${name}\` is not allowed; only pipefail, errexit, nounset and similar are`);
      i++;
      continue;
    }
    if (/^[-+][eufCEBhn]*o$/.test(w) && i + 1 < words.length) {
      // `-euo pipefail`: the cluster ends in o, whose option name is the next word.
      if (!SET_FLAGS.test(w.slice(0, -1)) && w.length > 2) deny(`\`set ${w}\` is not allowed`);
      if (!SET_OPTIONS.has(words[i + 1]!)) deny(`\`set -o ${words[i + 1]}\` is not allowed; only pipefail, errexit, nounset and similar are`);
      i++;
      continue;
    }
    if (!SET_FLAGS.test(w)) deny(`\`set ${w}\` is not allowed (\`-k\` exports arguments, \`-a\`/\`-m\`/\`-P\`... change the shell); use \`set -e\`, \`-u\` or \`-o pipefail\``);
  }
}

function checkShopt(args: readonly ShellWord[]): void {
  const words = literal(args, 'shopt');
  if (words.some((w) => /^-\w*[su]/.test(w))) deny('`shopt -s/-u` changes how bash reads later text; leave it out (`shopt` alone prints the options)');
}

function onlyMatching(program: string, pattern: RegExp, hint: string): ProgramRule {
  return {
    check: (args) => {
      for (const w of literal(args, program)) if (!pattern.test(w)) deny(`\`${program} ${w}\` is not allowed; ${hint}`);
    },
  };
}

const COMPGEN_ACTIONS = new Set(['alias', 'builtin', 'command', 'directory', 'disabled', 'enabled', 'export', 'file', 'function', 'group', 'hostname', 'job', 'keyword', 'running', 'setopt', 'shopt', 'signal', 'stopped', 'user', 'variable']);

/** `compgen -c`, `compgen -v`, `compgen -A function pre`: no -W/-F/-C/-G/-X (they expand or run). */
function checkCompgen(args: readonly ShellWord[]): void {
  const words = literal(args, 'compgen');
  let operands = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-A') {
      if (!COMPGEN_ACTIONS.has(words[++i] ?? '')) deny('`compgen -A` needs a known action');
    } else if (w.startsWith('-')) {
      if (!/^-[abcdefgjksuv]+$/.test(w)) deny(`\`compgen ${w}\` is not allowed (-W, -F, -C, -G and -X expand words or run code); use \`compgen -c\` or \`-v\``);
    } else if (++operands > 1) deny('`compgen` takes one prefix');
  }
}

function checkBuiltin(args: readonly ShellWord[], ctx: CommandContext): void {
  if (args.length === 0) return;
  if (ctx.depth >= 8) deny('too many nested commands');
  ctx.run(args, { ...ctx, depth: ctx.depth + 1 });
}

/** `tee` is read-only only when every file it would write is /dev/null. */
function checkTee(args: readonly ShellWord[]): void {
  for (const w of args) {
    if (w.kind === 'static' && /^(-[aip]+|--append|--ignore-interrupts|--output-error(=.*)?|--)$/.test(w.value)) continue;
    if (w.kind === 'static' && w.value === '/dev/null') continue;
    deny('`tee` writes files; print to stdout instead (tee may only write to /dev/null)');
  }
}

/** `trap`, `trap -l`, `trap -p [SIGNAL...]`: printing only (any other first word is an action). */
function checkTrap(args: readonly ShellWord[]): void {
  const words = literal(args, 'trap');
  if (words.length === 0 || (words.length === 1 && words[0] === '-l')) return;
  if (words[0] === '-p' && words.slice(1).every((w) => /^[A-Z0-9]+$/.test(w))) return;
  deny('`trap` may only print (`trap -p`); setting a trap runs code');
}

/** `exec` with no command only applies its redirections (checked like any other) to the shell. */
function checkExec(args: readonly ShellWord[]): void {
  if (args.length > 0) deny('`exec COMMAND` replaces the shell; run the command directly');
}

/**
 * `mapfile`/`readarray`: reads lines into an array. -C/-c run a callback; numeric
 * options must be literal digits; the array name goes through the assignment rules.
 */
function checkMapfile(args: readonly ShellWord[]): void {
  const words = literal(args, 'mapfile');
  const names: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-t') continue;
    if (/^-[nOsu]$/.test(w)) {
      if (!/^[0-9]+$/.test(words[++i] ?? '')) deny(`\`mapfile ${w}\` needs a literal number`);
      continue;
    }
    if (w === '-d') {
      i++;
      continue;
    }
    if (w.startsWith('-')) deny(`\`mapfile ${w}\` is not allowed (-C runs a callback)`);
    names.push(w);
  }
  if (names.length > 1) deny('`mapfile` takes one array name');
  for (const name of names) checkAssignable(name);
}

const OUTPUT_FILE = 'writes its output to a file; let it print to stdout instead';

export const builtinRules: Readonly<Record<string, ProgramRule>> = {
  set: { check: checkSet },
  shopt: { check: checkShopt },
  compgen: { check: checkCompgen },
  builtin: { check: checkBuiltin },
  hash: onlyMatching('hash', /^(-[lrt]+|[A-Za-z0-9_.-]+)$/, '`hash -p` maps a name to any file; use `hash` or `type -a NAME`'),
  alias: onlyMatching('alias', /^(-p|[A-Za-z0-9_.-]+)$/, 'defining aliases is not allowed; `alias` alone prints them'),
  trap: { check: checkTrap },
  enable: onlyMatching('enable', /^-[aps]+$/, '`enable -f` loads shared objects; `enable -a` lists builtins'),
  history: onlyMatching('history', /^[0-9]+$/, '`history -w/-a` write files; use `history N`'),
  jobs: onlyMatching('jobs', /^(-[lnprs]+|%.*)$/, '`jobs -x` runs a command'),
  stty: onlyMatching('stty', /^(-a|-g|--all|--save)$/, 'stty may only print settings (`stty -a`)'),
  umask: { anyArgs: true },
  ulimit: { anyArgs: true },
  dirs: { anyArgs: true },
  times: { anyArgs: true },
  help: { anyArgs: true },
  pushd: { anyArgs: true },
  popd: { anyArgs: true },
  tee: { check: checkTee },
  exec: { check: checkExec },
  mapfile: { check: checkMapfile },
  readarray: { check: checkMapfile },
  iconv: { check: (args) => void refuseOptions(args, 'iconv', { output: `\`iconv --output\` ${OUTPUT_FILE}` }, { o: `\`iconv -o\` ${OUTPUT_FILE}` }) },
  shuf: { check: (args) => void refuseOptions(args, 'shuf', { output: `\`shuf --output\` ${OUTPUT_FILE}` }, { o: `\`shuf -o\` ${OUTPUT_FILE}` }) },
};
