/**
 * docs/reference/cli.md: every command and subcommand of `forkflow`, as commander prints its
 * help (`helpInformation()`, at a fixed width), and the exit codes of src/cli/exit.ts.
 */
import { commands, helpOf } from '../cli';
import { constTable } from '../definitions';
import { code, generatedHeader, table } from './render';

export function cliPage(): string {
  const all = commands();
  const index = all.filter((c) => c.path.length > 0).map((c) => `[${c.path.join(' ')}](#${['forkflow', ...c.path].join('-')})`);
  const sections = all.map(({ path, command }) => {
    const title = ['forkflow', ...path].join(' ');
    return `## ${title}\n\n\`\`\`text\n${helpOf(command)}\n\`\`\`\n`;
  });
  return [
    generatedHeader(
      'CLI reference',
      "commander's help of every command (src/cli/main.ts `buildProgram()`)",
      `\`forkflow <command>\` (or \`npx forkflow\`). The program's options are global: they go before or after the command. What the commands are for, and an operator's day: [Operating](../guides/operating.md).\n\nCommands: ${index.join(' · ')}.`,
    ),
    `## Exit codes\n\n${table(['code', 'name', 'meaning'], constTable('src/cli/exit.ts', 'EXIT').map((e) => [e.value, code(e.key), e.doc]))}\n`,
    ...sections,
  ].join('\n');
}
