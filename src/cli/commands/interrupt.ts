/**
 * `forkflow interrupt` and `forkflow background`: stop an agent's turn without killing it
 * (its background sub-agents keep running), and move a running sync sub-agent to the
 * background now (src/client/interrupt.ts).
 */
import type { Command } from 'commander';
import { printJson } from '../output';
import { withClient, type GlobalOptions } from './agents';

export function registerInterruptCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command('interrupt <agentId>')
    .description('stop the turn in flight (model call, tool calls); the agent then waits for a message, or goes on with --message')
    .option('-r, --reason <text>', 'why, shown to the model')
    .option('-m, --message <text>', 'a message to act on at once instead of waiting')
    .option('-s, --summary <text>', 'a few words for the message')
    .option('--by <who>', 'who interrupts', 'operator')
    .action((agentId: string, flags: { reason?: string; message?: string; summary?: string; by?: string }) =>
      withClient(globals(), async (client) => {
        const answer = await client.interrupt(agentId, {
          ...(flags.reason ? { reason: flags.reason } : {}),
          ...(flags.message ? { message: flags.message } : {}),
          ...(flags.summary ? { summary: flags.summary } : {}),
          ...(flags.by ? { by: flags.by } : {}),
        });
        if (globals().json) printJson(answer);
        else process.stdout.write(`interrupted ${agentId} during its ${answer.during} (turn ${answer.turn}); ${answer.continues ? 'it goes on with your message' : 'it waits for a message'}\n`);
      }),
    );

  program
    .command('background <childId>')
    .description('move a running sync sub-agent to the background: its parent stops waiting and hears its outcome as a task notification')
    .option('--by <who>', 'who moves it', 'operator')
    .action((childId: string, flags: { by?: string }) =>
      withClient(globals(), async (client) => {
        const answer = await client.background(childId, flags.by ? { by: flags.by } : {});
        if (globals().json) printJson(answer);
        else process.stdout.write(answer.moved ? `${childId} moved to the background; ${answer.parentId} goes on\n` : `${childId} ended before ${answer.parentId} let go of it: its result went to the call\n`);
      }),
    );
}
