/**
 * Runs a command line in real /bin/bash with logging stubs first on an otherwise empty
 * PATH, and reports which programs bash started with which arguments, and which files
 * appeared. Used to check that what the parser-agreement shape says (simple-commands.ts)
 * is what bash really runs.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ShapeWord } from '../../src/activities/tools/shell/quote-removal';
import type { SimpleCommand } from '../../src/activities/tools/shell/simple-commands';

export const BASH = '/bin/bash';
const END = '\x01end\x01';
// One printf per call, so concurrent pipeline stages do not interleave their records. A stub
// reading a pipe drains it as a real filter would: one that exits at once could kill the
// stage before it with SIGPIPE, and what bash ran would then depend on timing.
const STUB = `#!/bin/bash\nprintf '%s\\0' "\${0##*/}" "$@" $'${END}' >> "$FZLOG"\n[ -p /dev/stdin ] && while IFS= read -r line || [ -n "$line" ]; do :; done\nexit 0\n`;

/** Names bash runs itself; no stub on PATH can observe them. */
export const BUILTINS = new Set(
  '. : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type typeset ulimit umask unalias unset wait'.split(' '),
);

export interface BashRun {
  calls: string[][];
  files: string[];
}

export class BashSandbox {
  readonly root = mkdtempSync(join(tmpdir(), 'shell-agree-'));
  private readonly stubs = join(this.root, 'stubs');

  constructor() {
    mkdirSync(this.stubs);
  }

  /** Put a logging stub named `name` on PATH (names that are not plain file names are skipped). */
  stub(name: string): void {
    if (!/^[A-Za-z0-9._+-]+$/.test(name) || name === '.' || name === '..' || BUILTINS.has(name)) return;
    const path = join(this.stubs, name);
    if (existsSync(path)) return;
    writeFileSync(path, STUB);
    chmodSync(path, 0o755);
  }

  run(command: string): BashRun {
    const cwd = mkdtempSync(join(this.root, 'run-'));
    writeFileSync(join(cwd, 'f'), 'a\n');
    const log = `${cwd}.log`;
    writeFileSync(log, '');
    // `eval` parses the text exactly as `-c` would. Bash does not wait for process
    // substitutions (`<(ls)`; `wait` covers only the last one), so stderr is a pipe: every
    // process of the run inherits it, and spawnSync returns once the last one has closed it —
    // so all of them have logged before the run is read.
    spawnSync(BASH, ['--norc', '--noprofile', '-c', 'eval "$1"; wait', 'bash', command], {
      cwd,
      env: { PATH: this.stubs, HOME: cwd, FZLOG: log },
      timeout: 2000,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const calls = readFileSync(log, 'utf8')
      .split(`${END}\0`)
      .filter(Boolean)
      .map((record) => record.split('\0').slice(0, -1));
    return { calls, files: readdirSync(cwd).filter((name) => name !== 'f') };
  }

  close(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

function wordMatches(word: ShapeWord, arg: string | undefined): boolean {
  if (arg === undefined) return false;
  return typeof word === 'string' ? word === arg : arg.startsWith(word.dynamic);
}

/** Whether a started program is one the shape lists (static words exactly, dynamic ones by their prefix). */
export function callMatches(command: SimpleCommand, call: readonly string[]): boolean {
  if (command.words.some((w) => typeof w !== 'string')) return wordMatches(command.words[0]!, call[0]);
  return command.words.length === call.length && command.words.every((w, i) => wordMatches(w, call[i]));
}

// `time ls`, `command ls`, `exec ls` run `ls` itself.
const PREFIXES = new Set(['time', 'command', 'exec']);

/** The shape's commands that bash runs through PATH (not builtins, not keywords). */
export function observable(commands: readonly SimpleCommand[]): SimpleCommand[] {
  return commands
    .map((c) => {
      let words = c.words;
      // `command -v x` only looks `x` up.
      if (words[0] === 'command' && (words[1] === '-v' || words[1] === '-V')) return { ...c, words: [] };
      while (typeof words[0] === 'string' && PREFIXES.has(words[0])) {
        words = words.slice(1);
        while (typeof words[0] === 'string' && words[0].startsWith('-')) words = words.slice(1);
      }
      return { ...c, words };
    })
    .filter((c) => c.words.length > 0 && !(typeof c.words[0] === 'string' && BUILTINS.has(c.words[0])));
}
