/**
 * `forkflow`, the operator CLI. Global flags reach every command; every error prints one line
 * saying what to do and exits with a documented code (src/cli/exit.ts, src/cli/errors.ts);
 * `--debug` adds the stack.
 */
import { Command, CommanderError } from 'commander';
import { registerAgentCommands, type GlobalOptions } from './commands/agents';
import { registerCodecServerCommand } from './commands/codec-server';
import { registerDemoCommand } from './commands/demo';
import { registerDreamCommands } from './commands/dream';
import { registerGatewayCommand } from './commands/gateway';
import { registerServeCommands } from './commands/serve';
import { registerTopCommand } from './commands/top';
import { registerTreeCommands } from './commands/tree';
import { registerTimeTravelCommands } from './commands/time-travel';
import { registerInterruptCommands } from './commands/interrupt';
import { registerScheduleCommands } from './commands/schedule';
import { registerPatchesCommands } from './commands/patches';
import { errorReport } from './errors';
import { EXIT } from './exit';

export function buildProgram(): Command {
  const program = new Command('forkflow')
    .description('LLM sub-agent forks as durable Temporal workflows')
    .option('--address <host:port>', 'Temporal frontend (default: TEMPORAL_ADDRESS or localhost:7233)')
    .option('--namespace <ns>', 'Temporal namespace (default: TEMPORAL_NAMESPACE or default)')
    .option('--task-queue <name>', 'task queue (default: FORKFLOW_TASK_QUEUE or forkflow)')
    .option('--outage-deadline <duration>', 'how long to keep retrying while Temporal is unreachable, e.g. 30s, 5m, 0s (default: FORKFLOW_OUTAGE_DEADLINE or 5m)')
    .option('--json', 'machine-readable output')
    .option('--debug', 'on an error, print its stack (and its causes) after the one-line message')
    .exitOverride()
    .showHelpAfterError();
  const globals = () => program.opts<GlobalOptions>();
  registerAgentCommands(program, globals);
  registerServeCommands(program, globals);
  registerDemoCommand(program, globals);
  registerDreamCommands(program, globals);
  registerTopCommand(program, globals);
  registerTreeCommands(program, globals);
  registerTimeTravelCommands(program, globals);
  registerInterruptCommands(program, globals);
  registerScheduleCommands(program, globals);
  registerPatchesCommands(program, globals);
  registerGatewayCommand(program);
  registerCodecServerCommand(program);
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
    const report = errorReport(err, program.opts<GlobalOptions>().debug === true);
    process.stderr.write(report.text);
    process.exitCode = report.exitCode;
  }
}
