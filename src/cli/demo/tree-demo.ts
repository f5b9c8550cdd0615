/**
 * The demo's second act: an agent tree. A lead agent calls the Agent tool twice in one turn —
 * a fork of itself and the named "reviewer" — both as child workflows in the background; their
 * completions reach its inbox as notifications. Then a message to the finished reviewer, by
 * name, resumes it from its durable history.
 */
import type { ForkflowClient, ForkResult } from '../../client';
import { blocksOf, type MessageParam } from '../../shared/messages-api/anthropic';
import { readTaskNotification } from '../../shared/tree/notifications';
import type { ForkStatus } from '../../shared/wire/status';
import { isTerminal } from '../../shared/wire/status';
import { formatUsage, table, truncate } from '../output';
import { LiveView, renderStatuses } from './live-table';
import { treeScenario } from './scenario';

export interface TreeDemoOptions {
  client: ForkflowClient;
  offline: boolean;
  runId: string;
  link: (workflowId: string) => string;
  say: (line: string) => void;
}

export interface TreeDemoOutcome {
  lead: ForkResult;
  followUp: { delivery: 'queued' | 'resumed'; result: ForkResult };
}

const tick = () => new Promise((r) => setTimeout(r, 250));

function childNote(s: ForkStatus): string {
  const c = s.children;
  return c.total === 0 ? s.activity ?? '' : `children: ${c.running} running, ${c.completed} completed of ${c.total}`;
}

/** "<task-id> status: summary" for each task notification the agent received. */
function notificationLines(messages: MessageParam[]): string[] {
  const texts = messages.flatMap((m) => (m.role === 'user' ? blocksOf(m) : []));
  return texts.flatMap((b) => {
    const n = b.type === 'text' ? readTaskNotification(b.text) : undefined;
    return n ? [`${n.taskId} ${n.status}: ${n.summary}`] : [];
  });
}

export async function runTreeDemo(o: TreeDemoOptions): Promise<TreeDemoOutcome> {
  const scenario = treeScenario(o.offline);
  const leadId = `demo-${o.runId}-lead`;
  o.say(`\n6. An agent tree: ${leadId} forks itself and starts the named "${scenario.reviewer.name}" agent (child workflows, in the background)`);
  const agents = [{ ...scenario.reviewer, sourceFile: '(demo)' }];
  const handle = await o.client.startAgent({ agentId: leadId, forkLabel: 'lead', prompt: scenario.rootPrompt, toolFilter: 'readOnly', maxTurns: 10, subAgents: { agents } });

  const view = new LiveView();
  for (;;) {
    const s = await handle.status().catch(() => undefined);
    const rows = [{ label: 'lead', status: s, note: s ? childNote(s) : undefined }];
    view.show(renderStatuses(rows), s ? `${s.state}/${s.turns}/${childNote(s)}` : 'starting');
    if (s && isTerminal(s.state)) break;
    await tick();
  }
  view.done();

  const lead = await handle.result();
  o.say(`   lead ${lead.status} after ${lead.turns} turns: ${lead.text}`);
  const children = lead.children ?? [];
  o.say(table(['agent', 'name', 'task', 'state', 'report'], children.map((c) => [c.agentId, c.name ?? '(fork)', c.description, c.state, truncate(c.text ?? c.error ?? '', 60)])));
  if (lead.treeUsage) o.say(`   tree usage: ${formatUsage(lead.treeUsage)}`);
  for (const line of notificationLines(await o.client.transcript(leadId))) o.say(`   notification in the lead's inbox: ${line}`);

  o.say(`\n7. A follow-up to the finished "${scenario.reviewer.name}", addressed by name: it resumes from its durable history`);
  const delivery = await o.client.sendMessage(scenario.reviewer.name, { message: scenario.followUp, summary: 'which change first?', from: 'demo' }, { root: leadId });
  const reviewer = children.find((c) => c.name === scenario.reviewer.name);
  if (!reviewer) throw new Error(`the lead did not start "${scenario.reviewer.name}" (children: ${children.map((c) => c.agentId).join(', ') || 'none'})`);
  const result = await o.client.result(reviewer.agentId);
  o.say(`   message ${delivery}; ${reviewer.agentId} ${result.status} after ${result.turns} turns: ${result.text}`);
  o.say(`   ${o.link(leadId)}`);
  return { lead, followUp: { delivery, result } };
}
