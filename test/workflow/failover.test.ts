/**
 * Failover on the dev server (issue 34): the primary (the harness's Anthropic offline model)
 * answers 529 for 30 s of its clock; calls move to the fallback (a second offline model on
 * the Chat Completions wire) and back once the window has passed; no agent fails; the switch
 * is in history, status and the stream, and charged at the fallback's price. A 400 never fails
 * over. The outage is a fault window on the emulated clock, ended by advancing that clock.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOfflineModel, type OfflineModel, type RequestLogEntry } from '../../src/offline';
import { catalogueOf } from '../../src/shared/providers/agent-provider';
import { estimateCostUsd } from '../../src/shared/providers/pricing';
import { providersConfigSchema } from '../../src/shared/providers/providers';
import type { StreamEvent } from '../../src/shared/streams/stream-events';
import { createProviderClients } from '../../src/worker/providers';
import { startHarness, type Harness } from '../kit/env';
import { script, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

let h: Harness;
let chat: OfflineModel;
/** The harness's own Anthropic offline model (the primary), known once its worker's clients are made. */
let primaryUrl: string;

const config = () =>
  providersConfigSchema.parse([
    // Every call tries the primary first (no cooldown): the move back needs no waiting.
    { name: 'anthropic', kind: 'anthropic', models: ['claude-sonnet-4-6'], fallbacks: [{ provider: 'openai', model: 'gpt-4.1-mini' }], failover: { afterAttempts: 2, cooldownMs: 0 } },
    // The same endpoint under another name, with an hour's cooldown: calls stay on the fallback.
    { name: 'sticky', kind: 'anthropic', baseURL: primaryUrl, apiKeyEnv: 'OFFLINE_ANTHROPIC_KEY', models: ['claude-haiku-4-5'], fallbacks: [{ provider: 'openai', model: 'gpt-4.1' }], failover: { afterAttempts: 2, cooldownMs: 3_600_000 } },
    { name: 'openai', kind: 'openai-compatible', baseURL: `${chat.url}/v1`, apiKeyEnv: 'OFFLINE_OPENAI_KEY', models: ['gpt-4.1-mini', 'gpt-4.1'] },
  ]);

beforeAll(async () => {
  chat = await startOfflineModel();
  h = await startHarness({
    name: 'failover',
    providers: (own) => {
      primaryUrl = own.baseURL;
      return createProviderClients(config(), own, { OFFLINE_OPENAI_KEY: 'k1', OFFLINE_ANTHROPIC_KEY: 'k2' });
    },
  });
});
afterAll(async () => {
  await h?.close();
  await chat?.close();
});

const of = (entries: RequestLogEntry[], marker: string) => entries.filter((e) => e.rawBody.includes(marker));
const completed = (entries: RequestLogEntry[]) => entries.filter((e) => e.outcome === 'completed');

/** An outage of the primary for requests carrying `marker`: 529 until 30 s of its clock have passed. */
function outage(marker: string): void {
  h.model.faults.add({ kind: 'status', status: 529, times: Infinity, until: h.model.clock.now() + 30_000, match: (e) => e.rawBody.includes(marker) });
}

async function streamOf(agentId: string): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of h.forkflow.stream(agentId)) events.push(e);
  return events;
}

test('a 30 s outage of the primary: a tree with forks moves to the fallback and back, and no agent fails', async () => {
  const gate = join(h.workspaceRoot, 'fo1-gate');
  const fork = (tag: string) => ({ name: 'Agent', input: { description: `fork ${tag}`, prompt: `Fork ${tag}.\n${toolStep('Glob', { pattern: '*' })}\n@reply fork ${tag} done` } });
  const root = script(
    'fo1.root',
    `@tools ${JSON.stringify([fork('A'), fork('B')])}`,
    '@reply waiting',
    toolStep('Bash', { command: `while [ ! -f ${gate} ]; do sleep 0.05; done; echo released` }),
    '@reply done',
  );
  outage('fo1.root');
  const handle = await h.forkflow.startAgent({ agentId: 'fo1-root', prompt: root, model: 'claude-sonnet-4-6', subAgents: { forkGate: true, providers: catalogueOf(config()) } });

  // While the outage lasts, every call the tree made was served by the fallback.
  await waitFor(async () => {
    const s = await handle.status();
    return s.activity === 'tool Bash' && s.children.completed === 2;
  }, 'both forks to finish and the root to wait at its gate');
  const during = of(h.model.log.entries(), 'fo1.root');
  expect(during.length).toBeGreaterThan(0);
  expect(during.every((e) => e.status === 529)).toBe(true);
  const fallback = completed(of(chat.log.entries(), 'fo1.root'));
  expect(new Set(fallback.map((e) => (e.body as { model: string }).model))).toEqual(new Set(['gpt-4.1-mini']));
  const status = await handle.status();
  expect(status.failover).toMatchObject({ primary: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, fallbacks: [{ provider: 'openai', model: 'gpt-4.1-mini' }], last: { to: { provider: 'openai', model: 'gpt-4.1-mini' } } });
  expect(status.failover!.switches).toBeGreaterThanOrEqual(2);
  // Each of the root's calls so far tried the primary twice (afterAttempts), then the fallback.
  const rootCalls = status.turns;
  expect(status.failover!.fallbackCalls.calls).toBe(rootCalls);

  // The outage ends on the primary's clock; the next call tries it first and it serves.
  h.model.clock.advance(30_000);
  writeFileSync(gate, '');
  const result = await handle.result();
  expect(result.status).toBe('completed');
  const after = await h.forkflow.status('fo1-root');
  expect(after.failover).toMatchObject({ serving: { provider: 'anthropic' }, last: { to: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, reason: 'recovered' } });
  expect(after.failover!.fallbackCalls.calls).toBe(rootCalls);
  const served = completed(of(h.model.log.entries(), 'fo1.root'));
  expect(served).toHaveLength(1);
  expect((served[0]!.body as { model: string }).model).toBe('claude-sonnet-4-6');

  // No agent failed; both forks answered from the fallback and kept their parent's chain.
  const agents = after.perAgent ?? [];
  expect(agents).toHaveLength(3);
  expect(agents.filter((a) => a.parentId === 'fo1-root').map((a) => a.state)).toEqual(['ended', 'ended']);
  for (const child of agents.filter((a) => a.parentId === 'fo1-root')) {
    const s = await h.forkflow.status(child.agentId);
    expect(s.state).toBe('completed');
    expect(s.failover?.switches).toBeGreaterThanOrEqual(1);
    expect(s.failover?.fallbackCalls.calls).toBe(s.turns);
  }

  // The stream says so: switches to the fallback, and the one back.
  const events = (await streamOf('fo1-root')).filter((e) => e.type === 'failover');
  expect(events.filter((e) => e.reason !== 'recovered').every((e) => e.to.provider === 'openai' && e.from.provider === 'anthropic' && /529|unavailable/.test(e.reason))).toBe(true);
  expect(events.at(-1)).toMatchObject({ reason: 'recovered', to: { provider: 'anthropic' } });

  // In history: each switch is a model call of its own, to the fallback's provider and model.
  const history = await h.client.workflow.getHandle('fo1-root').fetchHistory();
  const inputs = (history.events ?? []).flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    return a?.activityType?.name === 'callModel' ? [JSON.parse(Buffer.from(a.input!.payloads![0]!.data!).toString()) as { provider?: string; model?: string; failoverAfter?: number }] : [];
  });
  expect(inputs.filter((i) => i.provider === 'openai' && i.model === 'gpt-4.1-mini')).toHaveLength(rootCalls);
  expect(inputs.filter((i) => i.provider === undefined).every((i) => i.failoverAfter === 2)).toBe(true);
});

test('with a cooldown, calls stay on the fallback after a switch, and are charged at its price', async () => {
  outage('fo2.root');
  const root = script('fo2.root', toolStep('Glob', { pattern: '*' }), toolStep('Glob', { pattern: '*' }), '@reply done');
  const result = await h.forkflow
    .startAgent({ agentId: 'fo2-root', prompt: root, provider: 'sticky', model: 'claude-haiku-4-5', subAgents: { forkGate: false, provider: 'sticky', providers: catalogueOf(config()) } })
    .then((a) => a.result());
  expect(result).toMatchObject({ status: 'completed', text: 'done', turns: 3 });
  // The first call tried the primary twice; the next two went straight to the fallback.
  expect(of(h.model.log.entries(), 'fo2.root').map((e) => e.status)).toEqual([529, 529]);
  const fallback = completed(of(chat.log.entries(), 'fo2.root'));
  expect(fallback.map((e) => (e.body as { model: string }).model)).toEqual(['gpt-4.1', 'gpt-4.1', 'gpt-4.1']);
  const status = await h.forkflow.status('fo2-root');
  expect(status.failover).toMatchObject({ serving: { provider: 'openai', model: 'gpt-4.1' }, switches: 1, fallbackCalls: { calls: 3 } });
  // Per provider: all three calls on the fallback that served them (the primary served none).
  expect(status.providers?.map((p) => [p.provider, p.calls])).toEqual([['openai', 3]]);
  expect(status.providers?.[0]?.usage).toEqual(result.usage);
  expect(Date.parse(status.failover!.until!)).toBeGreaterThan(Date.parse(status.failover!.last!.at) + 3_000_000);
  // Charged at gpt-4.1's price, not claude-haiku-4-5's (they differ).
  expect(estimateCostUsd('gpt-4.1', result.usage)).not.toBe(estimateCostUsd('claude-haiku-4-5', result.usage));
  // (Each call is priced on its own, rounded to a millionth of a dollar.)
  expect(status.tree.costUsd).toBeCloseTo(estimateCostUsd('gpt-4.1', result.usage), 5);
  expect(status.tree.costUsd).not.toBeCloseTo(estimateCostUsd('claude-haiku-4-5', result.usage), 5);
});

test('a 400 never fails over: the agent fails as it always did, and the fallback is never asked', async () => {
  h.model.faults.add({ kind: 'status', status: 400, message: 'bad request on purpose', match: (e) => e.rawBody.includes('fo3.root') });
  const result = await h.forkflow
    .startAgent({ agentId: 'fo3-root', prompt: script('fo3.root', '@reply never'), model: 'claude-sonnet-4-6', subAgents: { forkGate: false, providers: catalogueOf(config()) } })
    .then((a) => a.result());
  expect(result.status).toBe('failed');
  expect(result.error).toContain('bad request on purpose');
  expect(of(h.model.log.entries(), 'fo3.root').map((e) => e.status)).toEqual([400]);
  expect(of(chat.log.entries(), 'fo3.root')).toHaveLength(0);
  const status = await h.forkflow.status('fo3-root');
  expect(status.failover).toMatchObject({ switches: 0, serving: { provider: 'anthropic' } });
});
