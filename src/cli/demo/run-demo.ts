/**
 * The demo (the README's first command): a parent agent surveys this repository; three
 * sibling forks start from it by reference (zero-copy, sharing its cached prefix); one
 * receives a message mid-run, one is cancelled; a live table follows them; reports, usage and Web UI links.
 * Then an agent tree (tree-demo.ts), and an agent using a service's own tools and an MCP
 * server (tools-demo.ts).
 */
import type { ForkflowClient, ForkHandle, ForkResult } from '../../client';
import type { ForkStatus } from '../../shared/wire/status';
import { isTerminal } from '../../shared/wire/status';
import { formatUsage } from '../output';
import { LiveView, renderStatuses } from './live-table';
import { demoScenario } from './scenario';
import { runTreeDemo, type TreeDemoOutcome } from './tree-demo';
import { runToolsDemo } from './tools-demo';
import { watchStream } from '../watch/watch';

export interface DemoOptions {
  client: ForkflowClient;
  offline: boolean;
  uiUrl?: string;
  namespace: string;
  /** Unique per run (the demo's dev server persists across runs). */
  runId: string;
  /** The Temporal server's address and the repository the agents look at (the tools act). */
  address: string;
  workspace: string;
  out?: (line: string) => void;
}

export interface DemoOutcome {
  parent: ForkResult;
  forks: ForkResult[];
  tree: TreeDemoOutcome;
  tools: ForkResult;
}

/** Streamed output (text arrives mid-line) as whole lines, each shown as soon as it ends. */
class LineWriter {
  private pending = '';
  constructor(private readonly line: (s: string) => void) {}
  write(s: string): void {
    const parts = (this.pending + s).split('\n');
    this.pending = parts.pop() ?? '';
    for (const p of parts) this.line(p);
  }
  end(): void {
    if (this.pending) this.line(this.pending);
    this.pending = '';
  }
}

const tick = () => new Promise((r) => setTimeout(r, 250));

function uiLink(o: DemoOptions, workflowId: string): string {
  return o.uiUrl ? `${o.uiUrl}/namespaces/${o.namespace}/workflows/${encodeURIComponent(workflowId)}` : workflowId;
}

export async function runDemo(o: DemoOptions): Promise<DemoOutcome> {
  const say = o.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const scenario = demoScenario(o.offline);
  const parentId = `demo-${o.runId}-parent`;

  say(`\n1. A parent agent surveys the repository (${parentId}); its live stream (as \`forkflow watch\` shows it):`);
  const started = await o.client.start({ agentId: parentId, forkLabel: 'parent', prompt: scenario.parentPrompt, toolFilter: 'readOnly', maxTurns: 8 });
  const lines = new LineWriter((line) => say(`   │ ${line}`));
  await watchStream(o.client, parentId, { out: (s) => lines.write(s) });
  lines.end();
  const parent = await started.result();
  say(`   ${parent.status} after ${parent.turns} turns: ${parent.text}`);

  say('\n2. Three sibling forks start from it by reference (same system, tools, model and messages: one cached prefix, recorded once in history)');
  const handles: ForkHandle[] = await o.client.forkMany(
    { agentId: parentId },
    scenario.forks.map((f) => ({ agentId: `demo-${o.runId}-${f.label}`, forkLabel: f.label, prompt: f.prompt, toolFilter: 'readOnly' as const, maxTurns: 10, parentAgentId: parentId, rootAgentId: parentId })),
  );

  const view = new LiveView();
  const notes: (string | undefined)[] = [undefined, undefined, undefined];
  let messaged = false;
  let cancelled = false;
  let statuses: (ForkStatus | undefined)[] = [];
  for (;;) {
    statuses = await Promise.all(handles.map((h) => h.status().catch(() => undefined)));
    const [, second, third] = statuses;
    if (!messaged && second && second.turns >= 1 && second.state === 'running') {
      messaged = true;
      await handles[1]!.sendMessage({ message: scenario.message, summary: 'also check fault injection', from: 'demo' });
      notes[1] = 'message sent';
    }
    if (!cancelled && third && third.turns >= 1 && third.state === 'running') {
      cancelled = true;
      await handles[2]!.cancel();
      notes[2] = 'cancel requested';
    }
    const rows = scenario.forks.map((f, i) => ({ label: f.label, status: statuses[i], note: statuses[i] && isTerminal(statuses[i].state) ? undefined : notes[i] }));
    view.show(renderStatuses(rows), rows.map((r) => `${r.status?.state}/${r.status?.turns}/${r.note}`).join(','));
    if (statuses.every((s) => s && isTerminal(s.state))) break;
    await tick();
  }
  view.done();

  const results = await Promise.all(handles.map((h) => h.result()));
  say('\n3. Reports');
  results.forEach((r, i) => {
    say(`\n── ${scenario.forks[i]!.label} · ${r.status}${r.status === 'killed' ? ' (partial result)' : ''} · ${r.turns} turns, ${r.toolUses} tool calls`);
    say(r.text || '(no text yet)');
  });
  say('\n4. Usage per fork (tokens)');
  results.forEach((r, i) => say(`   ${scenario.forks[i]!.label.padEnd(14)} ${formatUsage(r.usage)}`));
  say('\n5. In the Temporal Web UI');
  say(`   parent  ${uiLink(o, parentId)}`);
  handles.forEach((h, i) => say(`   ${scenario.forks[i]!.label.padEnd(14)} ${uiLink(o, h.agentId)}`));

  const tree = await runTreeDemo({ client: o.client, offline: o.offline, runId: o.runId, say, link: (id) => uiLink(o, id) });
  const tools = await runToolsDemo({ client: o.client, offline: o.offline, runId: o.runId, address: o.address, namespace: o.namespace, workspace: o.workspace, say, link: (id) => uiLink(o, id) });
  return { parent, forks: results, tree, tools };
}
