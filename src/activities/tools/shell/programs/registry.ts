/**
 * The allow-list: which program names may run, and the rule for each. A name is
 * looked up only after normalisation: it must be literal ASCII; a path is accepted
 * only in a system binary directory (`/usr/bin/grep` is grep, `./ls` is a file from
 * the workspace and is refused). Everything not listed is refused, with a hint for
 * the programs a model most often reaches for.
 */
import { deny } from '../deny';
import { own } from '../options';
import { quote, type ShellWord } from '../words';
import { awkRules } from './awk';
import { coreutilsRules } from './coreutils';
import { findRules } from './find';
import { gitRules } from './git';
import { ipRules } from './ip';
import { sedRules } from './sed';
import type { CommandContext, ProgramRule } from './types';
import { versionRules } from './versions';
import { builtinRules } from './builtins';
import { viewerRules } from './viewers';
import { inspectRules } from './inspect';
import { wrapperRules } from './wrappers';
import { checkPsArgs, checkSensitiveWord } from '../sensitive';
import type { ShellOptIn } from '../../../../shared/wire/activity-io';

/** Programs for which no argument can write or execute (checked option by option). */
const ANY_ARGS = (
  'cat head tail wc grep egrep fgrep ls cut tr nl stat du df pwd echo basename dirname realpath readlink ' +
  'which type true false : diff cmp comm jq uname id whoami groups printenv md5sum sha1sum sha224sum ' +
  'sha256sum sha384sum sha512sum b2sum cksum tac rev paste join expand unexpand fold column od hexdump ' +
  'strings seq sleep nproc arch locale tty uptime free numfmt expr yes fmt pr look cal ncal lscpu getconf ' +
  'locate plocate base64 base32 bc zcat zgrep'
).split(' ');

const RULES: Readonly<Record<string, ProgramRule>> = {
  ...Object.fromEntries(ANY_ARGS.map((name) => [name, { anyArgs: true } as const])),
  ...coreutilsRules,
  ...findRules,
  ...sedRules,
  ...awkRules,
  ...gitRules,
  ...ipRules,
  ...wrapperRules,
  ...versionRules,
  ...viewerRules,
  ...builtinRules,
  ...inspectRules,
  ps: { anyArgs: true, check: (args) => checkPsArgs(args) },
};

const INTERPRETER = 'can run arbitrary code; inspect files with cat, grep, sed -n or awk (without system()) instead';
const HINTS: Readonly<Record<string, string>> = {
  rm: '`rm` deletes files; this task is read-only',
  mv: '`mv` moves files; this task is read-only',
  cp: '`cp` writes files; read the file with cat instead',
  touch: '`touch` creates files; this task is read-only',
  dd: '`dd` can write files and devices; read with head -c or od instead',
  eval: '`eval` runs a string as a command; run the command directly',
  source: '`source` runs a script file; read it with cat instead',
  '.': '`.` runs a script file; read it with cat instead',
  export: '`export` changes the environment of later commands; leave it out',
  declare: '`declare` can evaluate arithmetic and set attributes; leave it out',
  less: '`less` is interactive and can run commands; use cat, head or sed -n',
  more: '`more` is interactive; use cat, head or sed -n',
  man: '`man` runs a pager; leave it out',
  vi: 'editors write files; this task is read-only',
  vim: 'editors write files; this task is read-only',
  nano: 'editors write files; this task is read-only',
  curl: 'network tools can write files and exfiltrate data; leave them out',
  wget: 'network tools can write files and exfiltrate data; leave them out',
  sudo: '`sudo` is not allowed',
  nohup: '`nohup` writes nohup.out; run the command directly',
};
for (const name of ['bash', 'sh', 'zsh', 'dash', 'ksh', 'fish', 'python', 'python3', 'perl', 'ruby', 'node', 'php', 'lua', 'deno', 'bun', 'tclsh', 'osascript']) {
  (HINTS as Record<string, string>)[name] = `\`${name}\` ${INTERPRETER}`;
}

/**
 * Programs seed 000 drops from the read-only list because they can shell out or write
 * (awk's `system()` and pipes, tee's files) and that operators may add back for a fork
 * (`shellPrograms`), by family: the classifier then allows only the shapes it validates.
 */
export type WithholdableProgram = ShellOptIn;
const WITHHOLDABLE: Readonly<Record<string, WithholdableProgram>> = { awk: 'awk', gawk: 'awk', mawk: 'awk', nawk: 'awk', tee: 'tee' };
const WITHHELD_WHY: Readonly<Record<WithholdableProgram, string>> = { awk: 'can run commands (system(), pipes)', tee: 'writes files' };

/** Directories whose programs may be named by path (they are what PATH finds anyway). */
const SYSTEM_DIR = /^\/(usr\/)?s?bin\/([^/]+)$/;

/** Normalise the command word to a program name, or refuse. */
export function programName(word: ShellWord): string {
  if (word.kind !== 'static') {
    deny(`the command name ${quote(word.text)} is not a literal word; write the program name directly`);
  }
  let name = word.value;
  if (name.includes('/')) {
    const m = SYSTEM_DIR.exec(name);
    if (!m) deny(`${quote(name)} runs a file by path; call an allowed program by its name (e.g. \`ls\`, not \`./ls\`)`);
    name = m[2]!;
  }
  if (!/^[A-Za-z0-9_.:[+-]+$/.test(name)) deny(`${quote(word.text)} is not a program on the read-only allow-list`);
  return name;
}

/** Classify one simple command: `words[0]` is the program, the rest its arguments. */
export function classifyWords(words: readonly ShellWord[], ctx: CommandContext): void {
  const first = words[0];
  if (!first) return;
  const name = programName(first);
  const rule = own(RULES, name);
  const family = own(WITHHOLDABLE, name);
  if (rule && family && ctx.withheld.has(family)) deny(`\`${name}\` ${WITHHELD_WHY[family]}; this agent may not run it (its operator did not allow ${family} back: shellPrograms), so use grep, cut, sed -n or head instead`);
  if (!rule) {
    deny(own(HINTS, name) ?? `\`${name}\` is not on the read-only allow-list (ls, cat, head, grep, rg, find, sed -n, awk, git log/diff/show, ...)`);
  }
  for (const word of words.slice(1)) checkSensitiveWord(word);
  if (ctx.xargs && !rule.anyArgs) {
    deny(`\`xargs ${name}\` is refused: xargs adds arguments from its input, so it may only run programs with no dangerous options (grep, cat, wc, ls, head...)`);
  }
  rule.check?.(words.slice(1), ctx);
}
