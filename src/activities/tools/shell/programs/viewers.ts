/**
 * Programs coding agents reach for while exploring that have one writing or executing
 * corner: `fd`/`fdfind` (-x/--exec and -X/--exec-batch run a program per match) and
 * `xxd` (a second operand is an output file it overwrites).
 */
import { deny } from '../deny';
import { refuseOptions } from '../options';
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

export const viewerRules: Readonly<Record<string, ProgramRule>> = {
  fd: { check: checkFd },
  fdfind: { check: checkFd },
  xxd: { check: checkXxd },
};
