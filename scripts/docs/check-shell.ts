/**
 * Commands the docs show, checked against what they name:
 * - `forkflow …` (also `npx forkflow …`, and `npm start -- …` / `npm run <script> -- …` where the
 *   script runs the CLI): the command exists in commander's program (src/cli/main.ts
 *   `buildProgram()`), and every `--flag` is one of its options or a global one;
 * - `npm run <script>`, `npm start`, `npm test`: the script exists in package.json;
 * - `temporal workflow start --type forkWorkflow … --input '<json>'`: the input is a valid fork
 *   input; `temporal workflow signal|update … --name <name> --input '<json>'`: the signal or
 *   update exists and the input is valid for it; `temporal workflow query … --type|--name <q>`:
 *   the query exists.
 * Lines of ```sh blocks are checked, inline code spans that start with `forkflow `,
 * `npx forkflow ` or `npm `, and the first column of command tables (a span that starts with
 * a command's name, e.g. `tree <rootId>`). Usage synopses are fine: `[--flag value]`, `<placeholder>` and `…`
 * are read as what they stand for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { acceptsFlag, optionsOf, program } from './cli';
import { messageDefinitions } from './definitions';
import { JSON_INPUTS, MESSAGE_INPUTS } from './inputs';
import { ROOT, type CodeBlock, type CodeSpan } from './markdown';

export const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console']);

/** A word of a command line, or an operator that separates commands. */
type Token = { word: string } | { op: string };

/** Splits a command line as the shell would: quotes, backslashes, `#` comments, `&&`, `||`, `;`, `|`, `&`. */
export function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let word: string | undefined;
  const flush = () => {
    if (word !== undefined) tokens.push({ word });
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, end < 0 ? line.length : end);
      i = end < 0 ? line.length : end;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length) text += line[++j];
        else text += line[j];
      }
      word = (word ?? '') + text;
      i = j;
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else if (/\s/.test(c)) {
      flush();
    } else if (c === '#' && word === undefined) {
      break;
    } else if ('&|;'.includes(c)) {
      flush();
      const two = line.slice(i, i + 2);
      const op = two === '&&' || two === '||' ? two : c;
      tokens.push({ op });
      i += op.length - 1;
    } else {
      word = (word ?? '') + c;
    }
  }
  flush();
  return tokens;
}

/** The simple commands of a line: runs of words between operators. */
function simpleCommands(line: string): string[][] {
  const out: string[][] = [[]];
  for (const t of tokenize(line)) {
    if ('op' in t) out.push([]);
    else out[out.length - 1]!.push(t.word);
  }
  return out.filter((c) => c.length > 0);
}

/** A synopsis word as what it stands for: `[--port` → `--port`, `8234]…` → `8234`. */
const unwrap = (w: string) => w.replace(/^[[(]+/, '').replace(/([\])]|…|\.\.\.)+$/, '');

/** Problems with `forkflow <words>`. */
function forkflowProblems(root: Command, words: string[]): string[] {
  let command = root;
  const path: string[] = [];
  const problems: string[] = [];
  let operands = 0;
  for (let i = 0; i < words.length; i++) {
    const word = unwrap(words[i]!);
    if (word === '' || word === '|') continue;
    const name = `forkflow${path.length ? ` ${path.join(' ')}` : ''}`;
    if (word.startsWith('-') && word !== '-') {
      if (!acceptsFlag(command, word)) {
        problems.push(`${name} has no option ${word.split('=')[0]} (its options: ${optionsOf(command).map((o) => o.long ?? o.short).join(' ')})`);
        continue;
      }
      const option = optionsOf(command).find((o) => o.long === word.split('=')[0] || o.short === word);
      if (option && (option.required || option.optional) && !word.includes('=') && i + 1 < words.length && !unwrap(words[i + 1]!).startsWith('-')) i++;
      continue;
    }
    if (/^<.*>$/.test(word) || word.startsWith('<')) {
      operands++;
      continue;
    }
    const named = (w: string) => command.commands.find((c) => c.name() === w || c.aliases().includes(w));
    // `list|describe|delete` in a synopsis: each alternative must be a command; the first is followed.
    const alternatives = word.includes('|') ? word.split('|').filter(Boolean) : [word];
    const sub = operands === 0 ? named(alternatives[0]!) : undefined;
    if (sub && alternatives.length > 1) {
      const missing = alternatives.filter((a) => !named(a));
      if (missing.length) problems.push(`${name} has no command ${missing.map((m) => `"${m}"`).join(', ')} (its commands: ${command.commands.map((c) => c.name()).join(', ')})`);
    }
    if (sub) {
      command = sub;
      path.push(sub.name());
      continue;
    }
    if (command.commands.length > 0 && command.registeredArguments.length === 0) {
      problems.push(`${name} has no command "${word}" (its commands: ${command.commands.map((c) => c.name()).join(', ')})`);
      break;
    }
    operands++;
  }
  return problems;
}

interface Scripts {
  [name: string]: string;
}

/** The CLI command a package.json script runs (`node bin/forkflow.js demo` → `['demo']`), if it runs one. */
function cliOf(script: string): string[] | undefined {
  const m = /(?:^|&&\s*)node bin\/forkflow\.js((?: [\w-]+)*)\s*$/.exec(script);
  return m ? m[1]!.trim().split(/\s+/).filter(Boolean) : undefined;
}

const queries = () => new Set(messageDefinitions().filter((d) => d.kind === 'query').map((d) => d.name));
const valueOf = (words: string[], ...flags: string[]) => {
  const i = words.findIndex((w) => flags.includes(w));
  return i >= 0 ? words[i + 1] : undefined;
};

/** Problems with `temporal workflow …` lines that send forkflow's own inputs. */
function temporalProblems(words: string[], queryNames: Set<string>): string[] {
  const [group, action, sub] = words;
  if (group !== 'workflow') return [];
  const input = valueOf(words, '--input', '-i');
  const parsed = (kind: string, check: (v: unknown) => string[]) => {
    if (input === undefined) return [];
    try {
      return check(JSON.parse(input)).map((issue) => `--input is not a valid ${kind}: ${issue}`);
    } catch (err) {
      return [`--input is not JSON: ${(err as Error).message}`];
    }
  };
  if (action === 'start' || action === 'execute') {
    const type = valueOf(words, '--type');
    if (type === 'forkWorkflow') return parsed('fork-input', JSON_INPUTS['fork-input']!.check);
    if (type === 'autoDreamWorkflow') return parsed('dream-config', JSON_INPUTS['dream-config']!.check);
    return [];
  }
  if (action === 'signal' || (action === 'update' && (sub === 'execute' || sub === 'start'))) {
    const name = valueOf(words, '--name');
    if (name === undefined) return [];
    const check = MESSAGE_INPUTS[name];
    if (!check) return [`no ${action} "${name}" takes an input (known: ${Object.keys(MESSAGE_INPUTS).join(', ')})`];
    return parsed(name, check);
  }
  if (action === 'query') {
    const name = valueOf(words, '--type', '--name');
    return name !== undefined && !queryNames.has(name) ? [`no query "${name}" (queries: ${[...queryNames].join(', ')})`] : [];
  }
  return [];
}

/** Problems with one command line (words of one simple command). */
function lineProblems(words: string[], ctx: { root: Command; scripts: Scripts; queries: Set<string> }): string[] {
  let w = [...words];
  while (w.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!)) w.shift(); // VAR=value before a command
  if (w[0] === 'npx') {
    w.shift();
    while (w[0]?.startsWith('-')) w.shift();
  }
  if (w[0] === 'node' && w[1] === 'bin/forkflow.js') w = ['forkflow', ...w.slice(2)];
  if (w[0] === 'forkflow') return forkflowProblems(ctx.root, w.slice(1));
  if (w[0] === 'temporal') return temporalProblems(w.slice(1), ctx.queries);
  if (w[0] === 'npm') {
    const [verb, maybe] = [w[1], w[2]];
    const script = verb === 'run' || verb === 'run-script' ? maybe?.replace(/…$/, '') : verb === 'start' || verb === 'test' ? verb : undefined;
    if (script === undefined || script === '' || verb === 'install' || verb === 'ci') return [];
    if (!(script in ctx.scripts)) return [`package.json has no script "${script}"`];
    const cli = cliOf(ctx.scripts[script]!);
    const dashes = w.indexOf('--');
    if (cli && dashes >= 0) return forkflowProblems(ctx.root, [...cli, ...w.slice(dashes + 1)]);
  }
  return [];
}

/** The logical lines of a shell block (backslash continuations joined), each with its line. */
function logicalLines(block: CodeBlock): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let pending: { line: number; text: string } | undefined;
  block.body.split('\n').forEach((raw, i) => {
    const line = block.line + 1 + i;
    const text = raw.replace(/^\s*\$ /, '');
    if (pending) pending.text += ` ${text.replace(/\\$/, '')}`;
    else pending = { line, text: text.replace(/\\$/, '') };
    if (!text.endsWith('\\')) {
      out.push(pending);
      pending = undefined;
    }
  });
  if (pending) out.push(pending);
  return out;
}

/** Problems with the commands of shell blocks and of command-like inline code spans. */
export function shellProblems(blocks: CodeBlock[], spans: CodeSpan[], root = ROOT): string[] {
  const ctx = { root: program(), scripts: (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Scripts }).scripts, queries: queries() };
  const problems: string[] = [];
  for (const block of blocks.filter((b) => SHELL_LANGS.has(b.lang))) {
    for (const { line, text } of logicalLines(block)) {
      for (const words of simpleCommands(text)) problems.push(...lineProblems(words, ctx).map((p) => `${block.file}:${line}: ${p}`));
    }
  }
  const topLevel = new Set(ctx.root.commands.map((c) => c.name()));
  for (const span of spans) {
    // A command table's first column shows synopses without the program's name (`tree <rootId>`).
    const synopsis = span.cell === 0 && topLevel.has(span.code.split(' ')[0]!);
    if (!synopsis && !/^(npx )?forkflow( |$)|^npm (run|start|test)\b/.test(span.code)) continue;
    const line = synopsis ? `forkflow ${span.code}` : span.code;
    for (const words of simpleCommands(line)) problems.push(...lineProblems(words, ctx).map((p) => `${span.file}:${span.line}: \`${span.code}\`: ${p}`));
  }
  return problems;
}
