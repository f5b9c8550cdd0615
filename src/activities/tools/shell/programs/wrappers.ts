/**
 * Programs that run another program: `env`, `command`, `nice`, `timeout`, `time`,
 * `xargs`. Each is read-only exactly when the program it runs is, so after its own
 * options the rest of the words are classified again as a command. `env` also checks
 * the variables it sets; `xargs` appends arguments from stdin we never see, so it may
 * only run programs for which every argument vector is safe (grep, cat, wc, ls...).
 */
import { checkAssignable } from '../assignments';
import { deny } from '../deny';
import { longTable, refuse, scanOptions, shortTable, type OptionSpec } from '../options';
import { maySplit, quote, type ShellWord } from '../words';
import type { CommandContext, ProgramRule } from './types';

const KEEP_ENV = 'the Bash tool sets protective variables (PAGER, GIT_*) for read-only commands; run the command without changing the environment';
const ENV: OptionSpec = {
  program: 'env',
  short: shortTable('0v', '', {
    i: refuse(`\`env -i\` clears the environment: ${KEEP_ENV}`),
    u: refuse(`\`env -u\` removes a variable: ${KEEP_ENV}`),
    C: refuse('`env -C`/`--chdir` is not allowed; use `cd DIR && command`'),
    S: refuse('`env -S` splits a string into a command line; write the command directly'),
  }),
  long: longTable('null debug list-signal-handling help version', '', {
    'ignore-environment': refuse(`\`env --ignore-environment\` clears the environment: ${KEEP_ENV}`),
    unset: refuse(`\`env --unset\` removes a variable: ${KEEP_ENV}`),
    chdir: refuse('`env -C`/`--chdir` is not allowed; use `cd DIR && command`'),
    'split-string': refuse('`env --split-string` splits a string into a command line; write the command directly'),
    'block-signal': 'optional',
    'default-signal': 'optional',
    'ignore-signal': 'optional',
  }),
  permute: false,
};

/**
 * `env [NAME=VALUE]... [COMMAND]`: every assignment goes through the same allow-list as
 * `NAME=VALUE command`, and the command is classified again. A lone `-` (the old spelling
 * of `-i`) is refused like `-i`.
 */
function checkEnv(args: readonly ShellWord[], ctx: CommandContext): void {
  const { operands } = scanOptions(args, ENV);
  if (operands[0]?.kind === 'static' && operands[0].value === '-') deny(`\`env -\` clears the environment: ${KEEP_ENV}`);
  let i = 0;
  for (; i < operands.length; i++) {
    const w = operands[i]!;
    const text = w.kind === 'static' ? w.value : w.prefix;
    const eq = text.indexOf('=');
    if (maySplit(w)) deny(`${quote(w.text)} is an unquoted variable that could split into a command for env; quote it`);
    if (eq < 0) {
      if (w.kind === 'dynamic') deny(`${quote(w.text)} could be a variable assignment or a command for env; write it literally`);
      break;
    }
    checkAssignable(text.slice(0, eq));
  }
  const command = operands.slice(i);
  if (command.length > 0) ctx.run(command, nested(ctx, true));
}

function checkCommand(args: readonly ShellWord[], ctx: CommandContext): void {
  let i = 0;
  let describe = false;
  for (; i < args.length; i++) {
    const w = args[i]!;
    if (w.kind !== 'static') deny(`${quote(w.text)} could be an option or a command for \`command\`; write it literally`);
    if (w.value === '--') {
      i++;
      break;
    }
    if (!/^-[pvV]+$/.test(w.value)) break;
    describe ||= /[vV]/.test(w.value);
  }
  // `command -v NAME` only describes NAME.
  if (describe || i >= args.length) return;
  ctx.run(args.slice(i), nested(ctx, ctx.exec));
}

function checkNice(args: readonly ShellWord[], ctx: CommandContext): void {
  let i = 0;
  const first = args[0];
  if (first?.kind === 'static') {
    if (first.value === '-n' || first.value === '--adjustment') i = 2;
    else if (/^(-n|--adjustment=)?-?\d+$/.test(first.value) || /^-n-?\d+$/.test(first.value)) i = 1;
    else if (first.value.startsWith('-') && first.value !== '--') deny(`\`nice ${first.value}\` is not an option I can verify; use \`nice -n N command\``);
  } else if (first) {
    deny(`${quote(first.text)} could be an option for nice; write it literally`);
  }
  if (i === 2 && args[1]?.kind !== 'static') deny('`nice -n` needs a literal number');
  if (args[i]?.kind === 'static' && (args[i] as { value: string }).value === '--') i++;
  const command = args.slice(i);
  if (command.length > 0) ctx.run(command, nested(ctx, true));
}

const TIMEOUT: OptionSpec = {
  program: 'timeout',
  short: shortTable('vfp', 'sk'),
  long: longTable('verbose foreground preserve-status help version', 'signal kill-after'),
  permute: false,
};

function checkTimeout(args: readonly ShellWord[], ctx: CommandContext): void {
  const { operands } = scanOptions(args, TIMEOUT);
  const command = operands.slice(1);
  if (command.length === 0) deny('`timeout` needs a duration and a command');
  ctx.run(command, nested(ctx, true));
}

function checkTime(args: readonly ShellWord[], ctx: CommandContext): void {
  let i = 0;
  while (args[i]?.kind === 'static' && ['-p', '--'].includes((args[i] as { value: string }).value)) i++;
  const next = args[i];
  if (next && next.kind === 'static' && next.value.startsWith('-')) {
    deny(`\`time ${next.value}\` is not allowed (GNU time's -o/-a write files); use plain \`time command\``);
  }
  if (next) ctx.run(args.slice(i), nested(ctx, true));
}

const XARGS: OptionSpec = {
  program: 'xargs',
  short: shortTable('0rtx', 'dnLPIsEa', {
    p: refuse('`xargs -p` prompts on the terminal; leave it out'),
    o: refuse('`xargs -o` reopens the terminal; leave it out'),
    i: refuse('use `xargs -I {}` instead of the old -i form'),
    e: refuse('use `xargs -E EOF` instead of the old -e form'),
    l: refuse('use `xargs -L N` instead of the old -l form'),
  }),
  long: longTable('null no-run-if-empty verbose exit show-limits help version', 'delimiter max-args max-lines max-procs max-chars arg-file', {
    replace: 'optional',
    eof: 'optional',
    interactive: refuse('`xargs --interactive` prompts on the terminal; leave it out'),
    'open-tty': refuse('`xargs --open-tty` reopens the terminal; leave it out'),
    'process-slot-var': refuse('`xargs --process-slot-var` sets an environment variable; leave it out'),
  }),
  permute: false,
};

function checkXargs(args: readonly ShellWord[], ctx: CommandContext): void {
  const { options, operands } = scanOptions(args, XARGS);
  // Without a command xargs runs echo.
  if (operands.length === 0) return;
  // With -I some xargs replace the string in the program name too; GNU does not.
  const replace = options.find((o) => o.name === '-I' || o.name === '--replace');
  if (replace) {
    const token = replace.value === undefined ? '{}' : replace.value.kind === 'static' ? replace.value.value : null;
    const program = operands[0]!;
    if (token === null || token === '' || program.kind !== 'static' || program.value.includes(token)) {
      deny('with `xargs -I`, use a literal replacement string that does not occur in the program name');
    }
  }
  ctx.run(operands, { ...nested(ctx, true), xargs: true });
}

function nested(ctx: CommandContext, exec: boolean): CommandContext {
  if (ctx.depth >= 8) deny('too many nested wrapper commands');
  return { ...ctx, exec, xargs: false, depth: ctx.depth + 1 };
}

export const wrapperRules: Readonly<Record<string, ProgramRule>> = {
  env: { check: checkEnv },
  command: { check: checkCommand },
  nice: { check: checkNice },
  timeout: { check: checkTimeout },
  time: { check: checkTime },
  xargs: { check: checkXargs },
};
