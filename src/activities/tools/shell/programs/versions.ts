/**
 * Interpreters and toolchains asked only for their version (`node --version`,
 * `python3 -V`, `gcc --version`). With exactly that one argument they print and exit
 * without running a script; any other argument vector is refused, since these programs
 * run arbitrary code. Left out on purpose: package managers and toolchain proxies (yarn,
 * pnpm, go, cargo, rustc) that may download a toolchain named by the project even for
 * `--version`.
 */
import { deny } from '../deny';
import type { ShellWord } from '../words';
import type { ProgramRule } from './types';

const VERSION_FLAGS: Readonly<Record<string, readonly string[]>> = {
  node: ['--version', '-v'],
  nodejs: ['--version', '-v'],
  python: ['--version', '-V'],
  python3: ['--version', '-V'],
  perl: ['--version', '-v'],
  ruby: ['--version'],
  java: ['--version', '-version'],
  bash: ['--version'],
  gcc: ['--version'],
  'g++': ['--version'],
  cc: ['--version'],
  clang: ['--version'],
  make: ['--version'],
  // Seen to write nothing for their version (the corpus's effect runs); other npm commands write logs.
  npm: ['--version', '-v'],
  npx: ['--version', '-v'],
  tsc: ['--version', '-v'],
};

function versionOnly(name: string, flags: readonly string[]): ProgramRule {
  return {
    check: (args: readonly ShellWord[]) => {
      const only = args[0];
      if (args.length === 1 && only?.kind === 'static' && flags.includes(only.value)) return;
      deny(`\`${name}\` can run arbitrary code; only \`${name} ${flags[0]}\` is read-only. Inspect files with cat, grep, sed -n or awk instead`);
    },
  };
}

export const versionRules: Readonly<Record<string, ProgramRule>> = Object.fromEntries(
  Object.entries(VERSION_FLAGS).map(([name, flags]) => [name, versionOnly(name, flags)]),
);
