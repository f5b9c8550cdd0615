/**
 * Commands for agent trees: named agent definitions (`agents`), starting a tree's root
 * (`agent`), running a `context: fork` command as a fork of an agent (`skill`), the members
 * of a tree (`tree`), following an agent (`watch`), and deciding approvals.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { formatAgentReport, loadAgentSources } from '../../activities/agents';
import type { AgentDefinition } from '../../shared/agents/agents';
import type { Usage } from '../../shared/messages-api/anthropic';
import { CliError, EXIT } from '../exit';
import { formatUsage, printJson, table, truncate } from '../output';
import { withClient, type GlobalOptions } from './agents';
import { watchStream, watchTree } from '../watch/watch';

/** Several directories: a later one's agent replaces an earlier one's of the same name (user, then project); then plugins (`plugin:name`). */
async function definitions(dirs: string[] | undefined, plugins: string[] = []): Promise<AgentDefinition[]> {
  if (!dirs?.length && !plugins.length) return [];
  const loaded = await loadAgentSources((dirs ?? []).map((d) => resolve(d)), { plugins: plugins.map((d) => resolve(d)) });
  for (const p of loaded.problems) process.stderr.write(`forkflow: ${p.file}${p.field ? ` (${p.field})` : ''}: ${p.problem} — ${p.fix}\n`);
  return loaded.agents;
}

function usageCells(u: Usage): string[] {
  return [u.inputTokens, u.outputTokens, u.cacheReadInputTokens, u.cacheCreationInputTokens].map(String);
}

export function registerTreeCommands(program: Command, globals: () => GlobalOptions): void {
  program
    .command('agents')
    .description('named agent definitions in a directory: what loads, and what is wrong with the rest')
    .option('-d, --dir <dirs...>', 'directories of *.md agent files; a later one overrides an earlier one by name', ['.forkflow/agents'])
    .option('--plugin-dir <dirs...>', 'Claude Code plugin directories: their agents/ load as <plugin>:<name>')
    .action(async (flags: { dir: string[]; pluginDir?: string[] }) => {
      const loaded = await loadAgentSources(flags.dir.map((d) => resolve(d)), { plugins: (flags.pluginDir ?? []).map((d) => resolve(d)) });
      const report = formatAgentReport(loaded);
      for (const line of loaded.overridden) process.stderr.write(`forkflow: ${line}\n`);
      // A field that is not honoured is a problem too: the exit status says so, in either format.
      if (report.problems.length > 0) process.exitCode = EXIT.failure;
      if (globals().json) return printJson(report);
      process.stdout.write(`${table(report.head, report.rows)}\n${report.summary}\n`);
      for (const p of report.problems) process.stdout.write(`  - ${p}\n`);
    });

  program
    .command('agent')
    .description('start an agent that may start sub-agents (the root of a tree)')
    .requiredOption('-p, --prompt <text>', 'its task')
    .option('-l, --label <label>', 'label', 'main')
    .option('--agent-id <id>', 'agent (and workflow) id')
    .option('--agents-dir <dirs...>', 'named agent definitions to offer it (several: a later directory overrides an earlier one by name)')
    .option('--plugin-dir <dirs...>', 'Claude Code plugin directories whose agents it is offered, as <plugin>:<name>')
    .option('--no-fork-gate', 'omitting subagent_type starts a general-purpose agent instead of a fork')
    .option('--nested', 'let spawned agents start their own sub-agents')
    .option('--bubble', 'writing tools wait for approval (forkflow approve|deny)')
    .option('-w, --wait', 'wait for the result')
    .action((flags: { prompt: string; label: string; agentId?: string; agentsDir?: string[]; pluginDir?: string[]; forkGate: boolean; nested?: boolean; bubble?: boolean; wait?: boolean }) =>
      withClient(globals(), async (client) => {
        const agents = await definitions(flags.agentsDir, flags.pluginDir);
        const handle = await client.startAgent({
          prompt: flags.prompt,
          forkLabel: flags.label,
          ...(flags.agentId ? { agentId: flags.agentId } : {}),
          subAgents: { agents, forkGate: flags.forkGate, nested: flags.nested === true },
          ...(flags.bubble ? { permissionMode: 'bubble' as const } : {}),
        });
        if (!flags.wait) return globals().json ? printJson({ agentId: handle.agentId }) : void process.stdout.write(`started ${handle.agentId}\n`);
        const result = await handle.result();
        if (globals().json) printJson(result);
        else process.stdout.write(`${result.status}: ${result.text}\n`);
        if (result.status !== 'completed') process.exitCode = EXIT.forkNotCompleted;
      }),
    );

  program
    .command('skill <name>')
    .description('run a `context: fork` command from the agents directory as a fork of an agent (its allowed tools only)')
    .requiredOption('--from <agentId>', 'the agent whose conversation the fork starts from')
    .option('-d, --dir <dir>', 'directory of command/skill files', '.forkflow/agents')
    .option('--plugin-dir <dirs...>', 'Claude Code plugin directories whose skills are named <plugin>:<name>')
    .option('-a, --args <text>', 'arguments appended to the command')
    .option('-w, --wait', 'wait for the result')
    .action((name: string, flags: { from: string; dir: string; pluginDir?: string[]; args?: string; wait?: boolean }) =>
      withClient(globals(), async (client) => {
        const skill = (await definitions([flags.dir], flags.pluginDir)).find((d) => d.name === name && d.context === 'fork');
        if (!skill) throw new CliError(`No command "${name}" with context: fork in ${[flags.dir, ...(flags.pluginDir ?? [])].join(', ')} (see \`forkflow agents --dir ${flags.dir}\`).`, EXIT.notFound);
        const prompt = [skill.systemPrompt, flags.args].filter(Boolean).join('\n\n');
        const handle = await client.forkFrom(flags.from, {
          prompt,
          forkLabel: `/${skill.name}`,
          ...(skill.allowedTools ? { toolAccess: { mode: 'allow_list' as const, tools: skill.allowedTools } } : {}),
        });
        if (!flags.wait) return void process.stdout.write(`started ${handle.agentId}\n`);
        const result = await handle.result();
        process.stdout.write(`${result.status}: ${result.text}\n`);
      }),
    );

  program
    .command('tree <rootId>')
    .description('every agent of a tree, with counts by state, and the forks started from points of its agents')
    .action((rootId: string) =>
      withClient(globals(), async (client) => {
        const tree = await client.tree(rootId);
        const forks = await client.forksOf([rootId, ...tree.agents.map((a) => a.agentId)]);
        if (globals().json) return printJson({ ...tree, forks });
        process.stdout.write(`${table(['agent', 'label', 'state', 'parent'], tree.agents.map((a) => [a.agentId, a.label, a.state, a.parentId]))}\n`);
        process.stdout.write(`${Object.entries(tree.counts).filter(([, n]) => n > 0).map(([s, n]) => `${s} ${n}`).join(' · ')}\n`);
        if (tree.usage) {
          const rows = tree.usage.perAgent.map((a) => [a.agentId, a.state, ...usageCells(a.usage), `$${a.costUsd.toFixed(4)}`, String(a.turns), String(a.toolUses)]);
          rows.push(['total', '', ...usageCells(tree.usage.total.usage), `$${tree.usage.total.costUsd.toFixed(4)}`, '', '']);
          process.stdout.write(`${table(['agent', 'state', 'input', 'output', 'cache read', 'cache write', 'cost', 'turns', 'tools'], rows)}\n`);
          const b = tree.usage.budget;
          if (b) process.stdout.write(`budget ${b.charged}/${b.max} tokens charged (cache reads weighted 0.1), ${b.left} left\n`);
        }
        if (forks.length > 0) {
          process.stdout.write(`forks by point\n${table(['fork', 'from', 'label', 'state', 'turns'], forks.map((f) => [`${'  '.repeat(f.depth - 1)}${f.agentId}`, `${f.parentId} at turn ${f.parentTurn}`, f.label, f.state, f.turns]))}\n`);
        }
      }),
    );

  program
    .command('watch <agentId>')
    .description("an agent's live text and tool calls until it ends (--tree: with its sub-agents; --status: status lines instead)")
    .option('--tree', 'also one line per agent of its subtree, above the focused agent\'s text')
    .option('--focus <agentId>', 'with --tree: whose text to show (default: the watched agent)')
    .option('--from-seq <n>', 'resume the stream at this seq', (v) => Number(v))
    .option('--status', 'print a status line whenever the status changes (no stream)')
    .option('--interval <ms>', 'with --status or --tree: how often to look', (v) => Number(v))
    .action((agentId: string, flags: { tree?: boolean; focus?: string; fromSeq?: number; status?: boolean; interval?: number }) =>
      withClient(globals(), async (client) => {
        if (flags.fromSeq !== undefined && !(Number.isInteger(flags.fromSeq) && flags.fromSeq >= 0)) throw new CliError('--from-seq takes a seq (an integer ≥ 0).', EXIT.usage);
        const fromSeq = flags.fromSeq !== undefined ? { fromSeq: flags.fromSeq } : {};
        if (flags.tree) {
          const tty = Boolean(process.stdout.isTTY) && !globals().json;
          return watchTree(client, agentId, { ...fromSeq, json: globals().json, tty, rows: process.stdout.rows, ...(flags.focus ? { focus: flags.focus } : {}), ...(flags.interval ? { intervalMs: flags.interval } : {}) });
        }
        if (!flags.status) {
          await watchStream(client, agentId, { ...fromSeq, json: globals().json });
          return;
        }
        for await (const s of client.watch(agentId, { intervalMs: flags.interval ?? 500 })) {
          if (globals().json) process.stdout.write(`${JSON.stringify(s)}\n`);
          else process.stdout.write(`${new Date().toISOString()}${s.color ? ` (${s.color})` : ''} ${s.state} turn ${s.turns}/${s.maxTurns} · ${s.toolUses} tools · ${formatUsage(s.usage)}${s.activity ? ` · ${s.activity}` : ''}${s.lastText ? ` · ${truncate(s.lastText, 60)}` : ''}\n`);
        }
      }),
    );

  for (const decision of ['approve', 'deny'] as const) {
    program
      .command(`${decision} <agentId> <requestId>`)
      .description(`${decision} a tool call waiting for approval (see \`forkflow status\`)`)
      .option('--reason <text>', 'why (the agent reads it)')
      .option('--by <who>', 'who decided', 'operator')
      .action((agentId: string, requestId: string, flags: { reason?: string; by: string }) =>
        withClient(globals(), async (client) => {
          const outcome = await client[decision](agentId, requestId, { by: flags.by, ...(flags.reason ? { reason: flags.reason } : {}) });
          if (globals().json) printJson({ agentId, requestId, outcome });
          else process.stdout.write(`${requestId}: ${outcome}\n`);
        }),
      );
  }
}
