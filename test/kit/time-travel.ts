/** Time-travel tests: an agent's requests as the offline model received them, and comparing a fork's first request with them. */
import type { Client } from '@temporalio/client';
import { blocksOf, stripCacheControl, type MessageParam } from '../../src/shared/messages-api/anthropic';
import type { OfflineModel, RequestLogEntry } from '../../src/offline';
import { bodyOf, messageRequests } from './requests';

/** The first user message's text of a request (what tells one agent's requests from another's). */
export function firstUserText(entry: RequestLogEntry): string {
  const first = bodyOf(entry).messages[0];
  if (!first) return '';
  return blocksOf(first)
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('\n');
}

/** Completed Messages requests whose first user text contains `marker`, oldest first. */
export function requestsWith(model: OfflineModel, marker: string, after = 0): RequestLogEntry[] {
  return messageRequests(model).filter((e) => e.seq > after && e.outcome === 'completed' && firstUserText(e).includes(marker));
}

/** Completed requests whose latest message contains `marker` (a fork's own message), oldest first. */
export function requestsEndingWith(model: OfflineModel, marker: string, after = 0): RequestLogEntry[] {
  return messageRequests(model).filter((e) => e.seq > after && e.outcome === 'completed' && JSON.stringify(bodyOf(e).messages.at(-1) ?? '').includes(marker));
}

/** An agent's request of turn t (a tool-using agent sends 2t - 1 messages at turn t, counting its opening as one). */
export function requestOfTurn(requests: RequestLogEntry[], turn: number, opening = 1): RequestLogEntry {
  const found = requests.filter((e) => bodyOf(e).messages.length === opening + 2 * (turn - 1));
  if (found.length !== 1) throw new Error(`expected one request of turn ${turn}, found ${found.length}`);
  return found[0]!;
}

export function lastSeq(model: OfflineModel): number {
  return model.log.entries().at(-1)?.seq ?? 0;
}

/**
 * The fork's request equals the agent's byte for byte up to the fork's own message: the same
 * model, max_tokens, system and tools (their serialized bytes), the same messages before its
 * own, and its own message begins with every block of the agent's last one, unchanged (the
 * fork's directive is appended after them). Returns how many messages came before its own.
 */
export function sameUpToOwnMessage(agent: RequestLogEntry, fork: RequestLogEntry, opts: { markers?: boolean } = {}): { before: number; problems: string[] } {
  // Without markers: the content only (a fork of a fork cannot repeat its parent's own
  // shared-prefix marker as well as place its own: a request carries at most four).
  const strip = (b: ReturnType<typeof bodyOf>) => (opts.markers === false ? { ...b, messages: b.messages.map((m) => unmarked([m])[0] as MessageParam) } : b);
  const a = strip(bodyOf(agent));
  const f = strip(bodyOf(fork));
  const problems: string[] = [];
  const rest = (b: typeof a) => JSON.stringify({ ...b, messages: undefined });
  if (rest(a) !== rest(f)) problems.push('model, max_tokens, system or tools differ');
  const before = f.messages.length - 1;
  if (a.messages.length !== f.messages.length) problems.push(`the agent sent ${a.messages.length} messages, the fork ${f.messages.length}`);
  for (let i = 0; i < before; i++) {
    if (JSON.stringify(a.messages[i]) !== JSON.stringify(f.messages[i])) problems.push(`message ${i} differs`);
  }
  const agentLast = a.messages.at(-1);
  const own = f.messages.at(-1);
  if (agentLast && own) {
    const blocks = blocksOf(agentLast);
    if (JSON.stringify(blocksOf(own).slice(0, blocks.length)) !== JSON.stringify(blocks)) problems.push("the fork's own message does not begin with the agent's last message's blocks");
    if (blocksOf(own).length <= blocks.length) problems.push("the fork's own message adds nothing");
  }
  if (opts.markers === false) return { before, problems };
  // The raw bytes agree too, wherever the serialized messages sit in them.
  const ownAt = fork.rawBody.indexOf(JSON.stringify(own));
  if (ownAt < 0 || fork.rawBody.slice(0, ownAt) !== agent.rawBody.slice(0, ownAt)) problems.push('the raw request bytes differ before the fork message');
  return { before, problems };
}

/** Messages without cache markers (what a transcript holds). */
export function unmarked(messages: MessageParam[]): unknown[] {
  return messages.map((m) => ({ role: m.role, content: blocksOf(m).map(stripCacheControl) }));
}

/** A run's history size in bytes as the server counts it. */
export async function historyBytes(client: Client, workflowId: string, runId?: string): Promise<number> {
  return Number((await client.workflow.getHandle(workflowId, runId).describe()).historySize);
}

/**
 * The bytes of every payload a run's history records (inputs, results, markers, signals,
 * memo): what would grow with the prefix if a fork recorded it rather than a reference to it.
 * Unlike the whole history's size it does not count the events that a busy machine adds (a
 * workflow task timed out and scheduled again), so it compares forks run under any load.
 */
export async function historyPayloadBytes(client: Client, workflowId: string, runId?: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  let bytes = 0;
  const walk = (value: unknown): void => {
    if (value instanceof Uint8Array) bytes += value.length;
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(history.events ?? []);
  return bytes;
}
