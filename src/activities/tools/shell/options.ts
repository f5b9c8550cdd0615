/**
 * A positive, getopt-style option scanner. Each program that has write or exec options
 * declares every option it accepts; anything not declared is refused. It follows GNU
 * getopt_long where that matters for safety:
 *  - short options combine (`-no` is `-n -o`) and may carry their value attached;
 *  - long options take `--name=value` or `--name value`, and any unambiguous prefix of
 *    a long name is accepted (`--out` means `--output`), so a prefix of a refused name
 *    is refused too;
 *  - options may follow operands (`sort file -o out`) unless the program stops at the
 *    first operand (`permute: false`: awk, env, xargs, timeout...);
 *  - `--` ends options; a lone `-` is an operand.
 */
import { deny } from './deny';
import { maySplit, mayBeOption, quote, type DynamicWord, type ShellWord } from './words';

/** `flag`: no value; `value`: needs one; `optional`: only attached (`-n5`, `--x=5`). */
export type Arity = 'flag' | 'value' | 'optional';
/** An option that is refused, with the reason shown to the model. */
export interface Refused {
  readonly deny: string;
}
export type OptionRule = Arity | Refused;

export interface OptionSpec {
  readonly program: string;
  readonly short: Readonly<Record<string, OptionRule>>;
  readonly long: Readonly<Record<string, OptionRule>>;
  /** GNU permutation: options may follow operands (default true). */
  readonly permute?: boolean;
}

export interface ScannedOption {
  /** `-x` or `--long-name` (the full name, even if abbreviated on the command line). */
  readonly name: string;
  readonly value?: ShellWord;
}

export interface Scan {
  readonly options: readonly ScannedOption[];
  readonly operands: readonly ShellWord[];
  /** Index in the input of the first operand that stopped a non-permuting scan. */
  readonly stoppedAt: number;
}

/** Shorthand for a refused option. */
export function refuse(reason: string): Refused {
  return { deny: reason };
}

/** Scan `args` (the words after the program name) against `spec`; throws on refusal. */
export function scanOptions(args: readonly ShellWord[], spec: OptionSpec): Scan {
  const options: ScannedOption[] = [];
  const operands: ShellWord[] = [];
  const permute = spec.permute ?? true;
  let i = 0;
  const next = (name: string): ShellWord => {
    const value = args[++i];
    if (!value) deny(`\`${spec.program} ${name}\` is missing its value`);
    // An unquoted variable can split, and a glob can match several files (even one named
    // `-ofoo`): either would push extra words into the argument list.
    if (maySplit(value) || (value.kind === 'dynamic' && value.multi && value.optionLike)) {
      deny(`the value of \`${spec.program} ${name}\` (${quote(value.text)}) could expand to several arguments; quote it`);
    }
    return value;
  };
  for (; i < args.length; i++) {
    const word = args[i]!;
    if (word.kind === 'static' && word.value === '--') {
      operands.push(...args.slice(i + 1));
      return { options, operands, stoppedAt: args.length };
    }
    if (!mayBeOption(word)) {
      if (!permute) return { options, operands: args.slice(i), stoppedAt: i };
      operands.push(word);
      continue;
    }
    if (word.kind === 'dynamic') {
      options.push(dynamicOption(word, spec));
      continue;
    }
    const text = word.value;
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const given = eq < 0 ? text.slice(2) : text.slice(2, eq);
      const rule = longRule(spec, given);
      if (!rule) deny(`\`${spec.program} --${given}\` is not an option I can verify as read-only; leave it out`);
      const name = `--${rule.name}`;
      if (eq >= 0) {
        if (rule.arity === 'flag') deny(`\`${spec.program} ${name}\` takes no value`);
        options.push({ name, value: { kind: 'static', value: text.slice(eq + 1), text } });
      } else if (rule.arity === 'value') {
        options.push({ name, value: next(name) });
      } else {
        options.push({ name });
      }
      continue;
    }
    for (let j = 1; j < text.length; j++) {
      const letter = text[j]!;
      const rule = own(spec.short, letter);
      if (rule === undefined) deny(`\`${spec.program} -${letter}\` is not an option I can verify as read-only; leave it out`);
      if (typeof rule === 'object') deny(rule.deny);
      if (rule === 'flag') {
        options.push({ name: `-${letter}` });
        continue;
      }
      const rest = text.slice(j + 1);
      if (rest || rule === 'optional') {
        options.push({ name: `-${letter}`, value: { kind: 'static', value: rest, text } });
      } else {
        options.push({ name: `-${letter}`, value: next(`-${letter}`) });
      }
      break;
    }
  }
  return { options, operands, stoppedAt: args.length };
}

/**
 * A word like `--name="$x"` or `-t$'\t'`: acceptable when its literal start already
 * reaches an option that takes a value, so the unknown part can only be that value.
 */
function dynamicOption(word: DynamicWord, spec: OptionSpec): ScannedOption {
  const unknown = (): never =>
    deny(`${quote(word.text)} could expand to an option of ${spec.program}; write the option literally, or put operands after \`--\``);
  if (word.split) unknown();
  const long = /^--([^=]+)=/.exec(word.prefix);
  if (long) {
    const rule = longRule(spec, long[1]!);
    if (!rule || rule.arity === 'flag') unknown();
    return { name: `--${rule!.name}`, value: word };
  }
  if (!/^-[^-]/.test(word.prefix)) unknown();
  for (const letter of word.prefix.slice(1)) {
    const rule = own(spec.short, letter);
    if (rule === undefined) unknown();
    if (typeof rule === 'object') deny(rule.deny);
    if (rule === 'value' || rule === 'optional') return { name: `-${letter}`, value: word };
  }
  return unknown();
}

/**
 * Resolve a long option the way getopt_long does (exact name, else a unique prefix).
 * Returns undefined for an unknown name; throws if the name is, or abbreviates, a
 * refused option, or is ambiguous between different arities.
 */
function longRule(spec: OptionSpec, given: string): { name: string; arity: Arity } | undefined {
  const exact = own(spec.long, given);
  const candidates = exact !== undefined ? [given] : Object.keys(spec.long).filter((n) => given && n.startsWith(given));
  if (candidates.length === 0) return undefined;
  const rules = candidates.map((name) => ({ name, rule: spec.long[name]! }));
  const refused = rules.find((r) => typeof r.rule === 'object');
  if (refused && typeof refused.rule === 'object') deny(refused.rule.deny);
  const arities = new Set(rules.map((r) => r.rule as Arity));
  if (arities.size > 1) deny(`\`${spec.program} --${given}\` is ambiguous; spell the option out`);
  return { name: rules[0]!.name, arity: rules[0]!.rule as Arity };
}

/** Build a short-option table from compact strings: `flags` letters, `values` letters. */
export function shortTable(flags: string, values = '', extra: Record<string, OptionRule> = {}): Record<string, OptionRule> {
  const table: Record<string, OptionRule> = {};
  for (const c of flags) table[c] = 'flag';
  for (const c of values) table[c] = 'value';
  return { ...table, ...extra };
}

/** Build a long-option table from space-separated names. */
export function longTable(flags: string, values = '', extra: Record<string, OptionRule> = {}): Record<string, OptionRule> {
  const table: Record<string, OptionRule> = {};
  for (const n of flags.split(/\s+/).filter(Boolean)) table[n] = 'flag';
  for (const n of values.split(/\s+/).filter(Boolean)) table[n] = 'value';
  return { ...table, ...extra };
}

/**
 * For programs with a huge, mostly harmless option set (git log, rg): refuse only the
 * listed long options, their unambiguous abbreviations, and listed short letters
 * anywhere in a cluster. Words that could expand to an option are refused too.
 * Returns the words that are not options.
 */
export function refuseOptions(
  args: readonly ShellWord[],
  program: string,
  long: Readonly<Record<string, string>>,
  short: Readonly<Record<string, string>> = {},
): ShellWord[] {
  const operands: ShellWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (word.kind === 'static' && word.value === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (!mayBeOption(word)) {
      operands.push(word);
      continue;
    }
    if (word.kind === 'dynamic') {
      // Known long option with an unknown value, or a short cluster whose unknown tail
      // cannot produce a refused letter because none are refused here.
      const m = word.split ? null : /^--([^=]+)=/.exec(word.prefix);
      if (m) checkRefusedLong(m[1]!, program, long);
      else if (word.split || !/^-[^-]/.test(word.prefix) || Object.keys(short).length > 0) {
        deny(`${quote(word.text)} could expand to an option of ${program}; write the option literally, or put operands after \`--\``);
      }
      continue;
    }
    if (word.value.startsWith('--')) {
      const name = word.value.slice(2).split('=')[0]!;
      checkRefusedLong(name, program, long);
      continue;
    }
    for (const letter of word.value.slice(1)) {
      const reason = own(short, letter);
      if (reason) deny(reason);
    }
  }
  return operands;
}

function checkRefusedLong(given: string, program: string, long: Readonly<Record<string, string>>): void {
  if (!given) deny(`\`${program} --=\` is not a valid option`);
  for (const [name, reason] of Object.entries(long)) {
    if (name.startsWith(given)) deny(reason);
  }
}

/** `table[key]` for own properties only (`--constructor` must not find Object's). */
export function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
