/**
 * Programs coding agents reach for while exploring that have one writing or executing
 * corner: `fd`/`fdfind` (-x/--exec and -X/--exec-batch run a program per match), `xxd`
 * (a second operand is an output file it overwrites), and the archive listers `tar -t`
 * and `unzip -l` (every other mode extracts; tar can also run programs through
 * --to-command, -I, --checkpoint-action and open `host:file` archives over rsh, so its
 * options are a positive list).
 */
import { deny } from '../deny';
import { longTable, refuseOptions, scanOptions, shortTable, type OptionSpec } from '../options';
import { mayBeOption, quote, type ShellWord } from '../words';
import type { ProgramRule } from './types';

function checkFd(args: readonly ShellWord[]): void {
  const exec = '`fd --exec`/`-x`/`-X` runs a program per match; print the paths and inspect them with a separate read-only command';
  refuseOptions(args, 'fd', { exec, 'exec-batch': exec, 'batch-size': exec }, { x: exec, X: exec });
}

/** xxd options that take a value as the next word (or attached, `-l64`). */
const XXD_VALUES = /^-(c|cols|g|groupsize|l|len|n|name|o|offset|s|seek)$/;

function checkXxd(args: readonly ShellWord[]): void {
  const operands: ShellWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (w.kind === 'static' && w.value === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (!mayBeOption(w)) {
      operands.push(w);
      continue;
    }
    if (w.kind !== 'static') deny(`${quote(w.text)} could expand to an xxd option; write options literally`);
    if (XXD_VALUES.test(w.value)) i++;
  }
  if (operands.some((w) => w.kind === 'dynamic' && w.multi)) deny('`xxd` with a glob or unquoted variable could receive an output file; name the input literally');
  if (operands.length > 1) deny('`xxd INPUT OUTPUT` overwrites OUTPUT; give xxd one input and read its stdout');
}

const TAR: OptionSpec = {
  program: 'tar',
  short: shortTable('tvzjJa', 'f'),
  long: longTable('list verbose gzip gunzip bzip2 xz zstd lzma auto-compress wildcards no-wildcards full-time numeric-owner', 'file exclude', {}),
};

function checkTar(args: readonly ShellWord[]): void {
  const words = [...args];
  // Old-style `tar tzf x.tgz`: a first word without a dash is a cluster of letters.
  if (words[0]?.kind === 'static' && /^[a-zA-Z]+$/.test(words[0].value)) words[0] = { ...words[0], value: `-${words[0].value}` };
  const { options } = scanOptions(words, TAR);
  const names = options.map((o) => o.name);
  if (!names.includes('-t') && !names.includes('--list')) deny('only `tar -t` (list) is read-only; extracting or creating writes files');
  for (const o of options.filter((x) => x.name === '-f' || x.name === '--file')) {
    const v = o.value!;
    if (v.kind !== 'static' || v.value.includes(':')) deny('`tar -f` needs a literal local archive name (`host:file` runs a remote shell)');
  }
}

function checkUnzip(args: readonly ShellWord[]): void {
  const options = args.filter((w) => w.kind !== 'static' || w.value.startsWith('-'));
  const ok = options.every((w) => w.kind === 'static' && /^-[lvtZ1q]+$/.test(w.value)) && options.some((w) => w.kind === 'static' && /[lvtZ]/.test(w.value));
  if (!ok) deny('only `unzip -l`/`-v`/`-t` (list or test) are read-only; extracting writes files');
}

export const viewerRules: Readonly<Record<string, ProgramRule>> = {
  fd: { check: checkFd },
  fdfind: { check: checkFd },
  xxd: { check: checkXxd },
  tar: { check: checkTar },
  unzip: { check: checkUnzip },
};
