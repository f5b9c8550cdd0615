/**
 * The `forkflow` CLI as commander holds it (src/cli/main.ts `buildProgram()`, never spawned):
 * every command and subcommand with its options, and its help text printed the same way on
 * every machine (100 columns, no colour), for the CLI reference and for checking the commands
 * the docs show.
 */
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/cli/main';

export interface CliCommand {
  /** The words after `forkflow`, e.g. `['dream', 'schedule', 'create']` (empty for the program). */
  path: string[];
  command: Command;
}

/** Help at a fixed width and without colour, whatever the terminal running the generator. */
function steady(command: Command): void {
  command.configureOutput({ getOutHelpWidth: () => 100, getErrHelpWidth: () => 100, getOutHasColors: () => false, getErrHasColors: () => false });
  for (const sub of command.commands) steady(sub);
}

/** The program, built fresh (commander keeps parse state), with steady help. */
export function program(): Command {
  const built = buildProgram();
  steady(built);
  return built;
}

/**
 * A command's help as the reference prints it: defaults taken from where the generator runs
 * (the current directory) are named, not spelled out, so the page is the same on every machine.
 */
export function helpOf(command: Command): string {
  return command.helpInformation().split(JSON.stringify(process.cwd())).join('"<current directory>"').trimEnd();
}

/** Every command, depth first in the order they were registered, the program first. */
export function commands(root: Command = program()): CliCommand[] {
  const out: CliCommand[] = [];
  const walk = (command: Command, path: string[]) => {
    out.push({ path, command });
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(root, []);
  return out;
}

/**
 * The command a list of words names: the longest path of command names (or aliases) it starts
 * with, and the words left over (arguments and options).
 */
export function resolveCommand(root: Command, words: string[]): { path: string[]; command: Command; rest: string[] } {
  let command = root;
  const path: string[] = [];
  let i = 0;
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (word.startsWith('-')) break;
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) break;
    command = sub;
    path.push(sub.name());
  }
  return { path, command, rest: words.slice(i) };
}

/** The options a command accepts: its own and every ancestor's (the program's are global), and help. */
export function optionsOf(command: Command): Option[] {
  const out: Option[] = [];
  for (let c: Command | null = command; c; c = c.parent) out.push(...c.options);
  return out;
}

/** Whether `--flag` / `-f` (with or without `=value`) is an option of the command. */
export function acceptsFlag(command: Command, flag: string): boolean {
  const name = flag.split('=')[0]!;
  if (name === '--help' || name === '-h') return true;
  return optionsOf(command).some((o) => o.long === name || o.short === name || (o.negate && o.long === name));
}
