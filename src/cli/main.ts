/**
 * `forkflow`, the operator CLI. Global flags reach every command; errors print one line
 * saying what to do and exit with a documented code (src/cli/exit.ts).
 */
import { Command, CommanderError } from 'commander';
import { registerAgentCommands, type GlobalOptions } from './commands/agents';
import { registerDemoCommand } from './commands/demo';
import { registerDreamCommands } from './commands/dream';
import { registerServeCommands } from './commands/serve';
import { registerTopCommand } from './commands/top';
import { registerTreeCommands } from './commands/tree';
import { CliError, EXIT } from './exit';

export function buildProgram(): Command {
  const program = new Command('forkflow')
    .description('LLM sub-agent forks as durable Temporal workflows')
    .option('--address <host:port>', 'Temporal frontend (default: TEMPORAL_ADDRESS or localhost:7233)')
    .option('--namespace <ns>', 'Temporal namespace (default: TEMPORAL_NAMESPACE or default)')
    .option('--task-queue <name>', 'task queue (default: FORKFLOW_TASK_QUEUE or forkflow)')
    .option('--json', 'machine-readable output')
    .exitOverride()
    .showHelpAfterError();
  const globals = () => program.opts<GlobalOptions>();
  registerAgentCommands(program, globals);
  registerServeCommands(program, globals);
  registerDemoCommand(program, globals);
  registerDreamCommands(program, globals);
  registerTopCommand(program, globals);
  registerTreeCommands(program, globals);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are not errors; anything else commander rejects is a usage error.
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    if (err instanceof CliError) {
      process.stderr.write(`forkflow: ${err.message}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    throw err;
  }
}
