/**
 * The crash tests' workload: fourteen forks of every shape that must come through crashes
 * unchanged (multi-turn tools, parallel tools, a read-only shell, siblings by reference, a
 * message mid-run, two agent trees with a background child each, a multi-turn fork on an
 * OpenAI-compatible provider and a tree whose child runs there), each running for
 * about half a minute so that crashes land in the middle of them; and the yardsticks: the
 * transcripts, with ids and durations aside, and the model's own record of what it served.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ForkflowClient, ForkResult } from '../../src/client';
import type { MessageParam } from '../../src/shared/messages-api/anthropic';
import type { ServedEntry } from './processes';
import { bigSnapshot } from './snapshots';
import { agentStep, script, toolStep } from './tree';

/** The OpenAI-compatible provider of the scenario: its workers and gateway configure it with {@link crashProviders}. */
export const CRASH_OPENAI_PROVIDER = 'openai';
export const CRASH_OPENAI_MODEL = 'gpt-4.1-mini';
const CRASH_ANTHROPIC_MODEL = 'claude-sonnet-4-6';
const CRASH_CATALOGUE = { anthropic: { models: [CRASH_ANTHROPIC_MODEL], aliases: {} }, [CRASH_OPENAI_PROVIDER]: { models: [CRASH_OPENAI_MODEL], aliases: {} } };

/**
 * FORKFLOW_PROVIDERS for the scenario's workers and gateway (the same JSON for both): the
 * workers' default Anthropic client, and the offline model's Chat Completions wire at `modelUrl`.
 */
export function crashProviders(modelUrl: string): { FORKFLOW_PROVIDERS: string; CRASH_OPENAI_KEY: string } {
  const config = [
    { name: 'anthropic', kind: 'anthropic', models: [CRASH_ANTHROPIC_MODEL] },
    { name: CRASH_OPENAI_PROVIDER, kind: 'openai-compatible', baseURL: `${modelUrl}/v1`, apiKeyEnv: 'CRASH_OPENAI_KEY', models: [CRASH_OPENAI_MODEL] },
  ];
  return { FORKFLOW_PROVIDERS: JSON.stringify(config), CRASH_OPENAI_KEY: 'offline-openai-key' };
}

export function seedWorkspace(dir: string): void {
  mkdirSync(join(dir, 'docs'), { recursive: true });
  writeFileSync(join(dir, 'notes.txt'), 'alpha\nbeta\ngamma\n');
  writeFileSync(join(dir, 'docs', 'guide.txt'), 'beta testers read this\n');
}

const steps = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i));

/** The same snapshot every run: a by-reference parent of a few KB. */
const snapshot = bigSnapshot({ conversationBytes: 12_000, pendingToolUses: 1 });

export interface Scenario {
  /** Every agent whose transcript is compared, children included. */
  agentIds: string[];
  results: Promise<ForkResult[]>;
}

/** Starts the fourteen forks with ids under `prefix`; the message fork gets its message at once. */
export async function startScenario(forkflow: ForkflowClient, prefix: string): Promise<Scenario> {
  const id = (name: string) => `${prefix}-${name}`;
  // Each step waits a little differently (the same in every run), so forks do not answer in
  // lockstep: real forks do not, and a crash should not find a dozen replies landing at once.
  let step = 0;
  // Three quarters of each base: forks still outlast the longest crash schedule (about 33 s
  // with restarts) by far, and the crash file costs CI a minute less.
  const slow = (ms: number) => `@sleep ${Math.round(ms * 0.75) + ((step++ * 41) % 700)} `;
  const handles = [];
  for (let i = 0; i < 3; i++) {
    const prompt = script(
      `Multi-turn ${i}.`,
      ...steps(10, (k) => (k % 2 ? toolStep('Grep', { pattern: 'beta', output_mode: 'content' }, slow(3000)) : toolStep('Read', { file_path: 'notes.txt' }, slow(3000)))),
      `${slow(2000)}@reply multi-turn ${i} done`,
    );
    handles.push(await forkflow.start({ agentId: id(`multi-${i}`), prompt }));
  }
  for (let i = 0; i < 2; i++) {
    const parallel = JSON.stringify([
      { name: 'Read', input: { file_path: 'notes.txt' } },
      { name: 'Glob', input: { pattern: '**/*.txt' } },
      { name: 'Grep', input: { pattern: 'beta', output_mode: 'files_with_matches' } },
    ]);
    const prompt = script(`Parallel ${i}.`, ...steps(8, () => `${slow(3500)}@tools ${parallel}`), `${slow(2000)}@reply parallel ${i} done`);
    handles.push(await forkflow.start({ agentId: id(`parallel-${i}`), prompt }));
  }
  const shell = script('Shell.', ...steps(8, (k) => toolStep('Bash', { command: k % 2 ? 'grep -c beta notes.txt docs/guide.txt' : 'wc -l notes.txt' }, slow(3500))), `${slow(2000)}@reply shell done`);
  handles.push(await forkflow.start({ agentId: id('shell'), prompt: shell, toolFilter: 'readOnly' }));

  const siblings = await forkflow.forkMany(
    snapshot,
    [0, 1, 2].map((i) => ({
      agentId: id(`sibling-${i}`),
      prompt: script(`Sibling ${i}.`, ...steps(8, () => toolStep('Read', { file_path: 'docs/guide.txt' }, slow(3500))), `${slow(2000)}@reply sibling ${i} done`),
    })),
  );
  handles.push(...siblings);

  const listener = await forkflow.start({ agentId: id('message'), prompt: script('Listen.', toolStep('Read', { file_path: 'notes.txt' }, slow(4000)), '@reply not reached') });
  await forkflow.sendMessage(id('message'), {
    message: script('Also this.', ...steps(8, () => toolStep('Grep', { pattern: 'gamma' }, slow(3500))), `${slow(2000)}@reply message handled`),
  });
  handles.push(listener);

  const child = (name: string) => script(`Child ${name}.`, ...steps(7, () => toolStep('Read', { file_path: 'notes.txt' }, slow(4000))), `${slow(2000)}@reply child ${name} done`);
  const background = script('Tree with a background child.', agentStep({ description: 'background', prompt: child('bg'), run_in_background: true }), `${slow(3000)}@reply waiting`, '@reply after the report');
  handles.push(await forkflow.startAgent({ agentId: id('tree-bg'), prompt: background }));
  // Every spawn reports by notification: the parent's turn after its reply is the report's.
  const foreground = script('Tree with a second child.', agentStep({ description: 'second', prompt: child('fg') }), `${slow(2000)}@reply waiting too`, '@reply after the second report');
  handles.push(await forkflow.startAgent({ agentId: id('tree-fg'), prompt: foreground }));

  // On an OpenAI-compatible provider (Chat Completions through the gateway's provider path):
  // a multi-turn fork, and a tree whose child runs there while its parent is on Anthropic.
  // Their prompts are the same in every run (the transcripts compare token counts): a later run
  // reads more of them from the provider's cache, which moves tokens between kinds, not their total.
  const onOpenai = script('OpenAI multi-turn.', ...steps(9, (k) => (k % 2 ? toolStep('Grep', { pattern: 'gamma', output_mode: 'content' }, slow(3000)) : toolStep('Read', { file_path: 'docs/guide.txt' }, slow(3000)))), `${slow(2000)}@reply openai multi-turn done`);
  handles.push(await forkflow.start({ agentId: id('openai-multi'), prompt: onOpenai, provider: CRASH_OPENAI_PROVIDER, model: CRASH_OPENAI_MODEL }));
  // A spawn (not a fork: a fork stays on its parent's provider), in the background: a foreground
  // one that outlives backgroundAfter (2 min: kills and restarts can take that) would report otherwise.
  const openaiChild = agentStep({ description: 'openai', prompt: child('oa'), provider: CRASH_OPENAI_PROVIDER, model: CRASH_OPENAI_MODEL, run_in_background: true });
  const mixed = script('Tree with a child on OpenAI.', openaiChild, `${slow(2000)}@reply waiting for openai`, '@reply after the openai report');
  handles.push(await forkflow.startAgent({ agentId: id('tree-oa'), prompt: mixed, model: CRASH_ANTHROPIC_MODEL, subAgents: { forkGate: false, providers: CRASH_CATALOGUE } }));

  return {
    agentIds: [...handles.map((h) => h.agentId), id('tree-bg.fork-1'), id('tree-fg.fork-1'), id('tree-oa.spawn-1')],
    results: Promise.all(handles.map((h) => h.result())),
  };
}

/** A transcript with the run's prefix, tool-use ids and durations made comparable. */
export function comparable(transcript: MessageParam[], prefix: string): string {
  const ids = new Map<string, string>();
  return JSON.stringify(transcript)
    .split(prefix)
    .join('RUN')
    .replace(/toolu_[A-Za-z0-9_]+/g, (m) => {
      if (!ids.has(m)) ids.set(m, `toolu_${ids.size}`);
      return ids.get(m)!;
    })
    .replace(/duration_ms: \d+/g, 'duration_ms: N');
}

/** The offline model's request id for a log sequence number (src/offline/ids.ts). */
export const requestIdOf = (seq: number) => `req_offline_${String(seq).padStart(8, '0')}`;

/**
 * Requests the model completed more than once, split by what the worker knew of the first
 * response: `keptThenAskedAgain` (it had reached the response store, and the retry asked the
 * model anyway: a broken promise) and `lostInFlight` (the model had written it, but the worker
 * died before the response reached it, which is a call interrupted mid-way).
 */
export function servedTwice(entries: ServedEntry[], kept: { has(id: string): boolean }): { keptThenAskedAgain: number[]; lostInFlight: number[] } {
  const first = new Map<string, number>();
  const out = { keptThenAskedAgain: [] as number[], lostInFlight: [] as number[] };
  for (const e of [...entries].sort((a, b) => a.seq - b.seq)) {
    if (e.outcome !== 'completed') continue;
    const earlier = first.get(e.rawBody);
    if (earlier === undefined) first.set(e.rawBody, e.seq);
    else (kept.has(requestIdOf(earlier)) ? out.keptThenAskedAgain : out.lostInFlight).push(earlier);
  }
  return out;
}

/** When the workers' response stores kept each request id, from their journal (FORKFLOW_RESPONSE_JOURNAL). */
export function keptRequests(journal: string): Map<string, number> {
  if (!existsSync(journal)) return new Map();
  const lines = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
  const kept = new Map<string, number>();
  for (const line of lines) {
    const { kept: id, at } = JSON.parse(line) as { kept: string | null; at: number };
    if (typeof id === 'string') kept.set(id, at);
  }
  return kept;
}

/** A small seeded generator (mulberry32): the same seed, the same crash schedule. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
