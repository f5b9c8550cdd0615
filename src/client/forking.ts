/**
 * How the ForkflowClient starts forks and forks from a point: validating and starting one
 * fork, recording a snapshot once, resolving a point of an agent's past (`from`, `atTurn`),
 * siblings from one prefix, and reading an agent's lineage, forks and cache-safe snapshot.
 * The class delegates here in one line; starting returns ids, and the class makes the handle.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { WORKFLOW_TYPES } from '../shared/wire/constants';
import { type ForkInputJson } from '../shared/wire/fork-input';
import { describeIssues, validateForkInput, validateSnapshot } from '../shared/wire/fork-input-validation';
import { type CacheSafeParams } from '../shared/wire/cache-safe-params';
import { cacheKeyComponents, messagePrefixHash } from '../shared/prefix/cache-key';
import { hashJson } from '../shared/base/hash';
import type { PrefixRef } from '../shared/prefix/prefix';
import { snapshotCompactionFor, type SnapshotCompaction, type SnapshotRecord } from '../shared/context/snapshot';
import { viewMessages } from '../shared/context/view';
import { requestContextQuery } from '../shared/wire/messages';
import { firstLine } from '../shared/base/text';
import { forkPointSchema, resumable, type TurnPoint } from '../shared/prefix/time-travel';
import { InvalidForkInputError } from './errors';
import { startMemo } from './rows';
import type { ForkParams } from './runner';
import { inheritedBy, runsAs, startFrom, turnPointOf, type PointOptions } from './time-travel';
import { refuseParentMedia, refuseUnsaidCounterfactual } from './input-checks';
import { forksByPoint, lineageOf, startAttributes, type ForkByPoint, type LineageStep } from './lineage';
import { slug, withToolDefaults, type ForkflowClientOptions } from './options';
import { prefixRefOf, readAgent, transcriptOf, type ReadingClient } from './reading';

/** What starting and forking use of a client: the reads' parts, its queues and default tools. */
export interface StartingClient extends ReadingClient {
  readonly temporal: Client;
  readonly taskQueue: string;
  readonly modelQueue?: string;
  readonly defaults?: ForkflowClientOptions['defaults'];
}

/** A fork's parameters without a parent: what `forkMany` and `forkFrom` take for each fork. */
type PointFork = Omit<ForkParams, 'parent' | 'parentRef' | 'from'>;

/** Validates and starts a fork (a `from` point resolved first); the started agent's ids. */
export async function startFork(c: StartingClient, params: ForkParams, opts: { taskQueue?: string }): Promise<{ agentId: string; runId: string | undefined }> {
  const { agentId: shorthand, ...input } = await resolveFrom(c, params);
  const agentId = shorthand ?? input.overrides?.agentId ?? `fork-${slug(input.forkLabel ?? 'fork')}-${randomUUID().slice(0, 8)}`;
  // The parent first: siblings' inputs then share their leading bytes, which external
  // storage keeps once (src/payloads/fs-driver.ts).
  const { parent, ...rest } = input;
  const withId: ForkInputJson = withToolDefaults({ ...(parent ? { parent } : {}), ...rest, ...(c.modelQueue && !rest.modelQueue ? { modelQueue: c.modelQueue } : {}), overrides: { ...input.overrides, agentId } }, c.defaults);
  const validated = validateForkInput(withId);
  if (!validated.ok) throw new InvalidForkInputError(validated.issues);
  const v = validated.value;
  refuseParentMedia(parent?.messages, v.contextWindow);
  if (v.replay && v.parentRef && !resumable(v.parentRef)) throw new InvalidForkInputError([`replay: the point ends with the agent's own ${v.parentRef.pendingToolUseIds.length > 0 ? 'tool calls, unanswered' : 'reply'}; a replay goes on from a point where the agent was about to call the model (an earlier turn), or fork with a directive`]);
  const handle = await c.temporal.workflow.start(WORKFLOW_TYPES.fork, {
    args: [withId],
    taskQueue: opts.taskQueue ?? c.taskQueue,
    workflowId: agentId,
    staticSummary: `${v.forkLabel}: ${firstLine(v.prompt, 120)}`,
    staticDetails: `**Directive**\n\n${v.prompt}`,
    typedSearchAttributes: startAttributes(agentId, v),
    ...startMemo(v),
  });
  return { agentId, runId: handle.firstExecutionRunId };
}

/** Records a snapshot once (a workflow whose id is derived from its content) and returns its reference. */
export async function recordSnapshot(c: StartingClient, snapshot: CacheSafeParams, opts: { taskQueue?: string; compact?: SnapshotCompaction }): Promise<PrefixRef> {
  const validated = validateSnapshot(snapshot);
  if (!validated.ok) throw new InvalidForkInputError(validated.issues.map((i) => `parent.${i}`));
  refuseParentMedia(snapshot.messages, opts.compact?.window);
  const { requestHashes: _hashes, ...content } = snapshot;
  const workflowId = `forkflow-snapshot-${hashJson(opts.compact ? { content, compact: opts.compact } : content).slice(0, 32)}`;
  type Recorder = (s: CacheSafeParams, o?: { compact?: SnapshotCompaction }) => Promise<SnapshotRecord>;
  const existing = c.temporal.workflow.getHandle<Recorder>(workflowId);
  const referenceOf = ({ compaction: _cost, ...ref }: SnapshotRecord): PrefixRef => ref;
  try {
    if ((await existing.describe()).status.name === 'COMPLETED') return referenceOf(await existing.result());
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  const handle = await c.temporal.workflow.start<Recorder>(WORKFLOW_TYPES.snapshot, {
    args: opts.compact ? [snapshot, { compact: opts.compact }] : [snapshot],
    taskQueue: opts.taskQueue ?? c.taskQueue,
    workflowId,
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: `snapshot: ${snapshot.messages.length} messages for ${snapshot.model}${opts.compact ? ', compacted for a window of ' + opts.compact.window + ' tokens' : ''}`,
  });
  return referenceOf(await handle.result());
}

/** Sibling forks from one snapshot or point, each started by `start` (the client's, which makes its handle). */
export async function forkMany<H>(c: StartingClient, source: CacheSafeParams | ({ agentId: string } & PointOptions), forks: PointFork[], opts: { taskQueue?: string }, start: (params: ForkParams, opts: { taskQueue?: string }) => Promise<H>): Promise<H[]> {
  // Refused before anything starts (a fork refused by its workflow would still show in listings and lineage).
  if (!('agentId' in source)) for (const f of forks) refuseUnsaidCounterfactual(f, source.model);
  const from = 'agentId' in source ? await pointStart(c, source.agentId, source) : { at: { parentRef: await recordSnapshot(c, source, { ...opts, ...snapshotCompactionFor(source, forks[0]) }) }, runsAs: {} };
  if ('agentId' in source) for (const f of forks) refuseUnsaidCounterfactual(f, from.at.parentRef?.context.model);
  return Promise.all(forks.map((f) => start({ ...inheritedBy(f, from.runsAs), ...f, ...from.at }, opts)));
}

/**
 * What a fork from a point of an agent's past starts at (the point's reference and origin),
 * and how the agent ran that its prefix does not carry (its effort; see inheritedBy).
 */
async function pointStart(c: StartingClient, agentId: string, opts: PointOptions): Promise<{ at: Pick<ForkParams, 'parentRef' | 'origin'>; runsAs: Pick<ForkParams, 'effort'> }> {
  const point = await turnPoint(c, agentId, opts);
  return { at: startFrom(point), runsAs: await c.outage.read('runsAs', () => runsAs(c.temporal, point)) };
}

export function turnPoint(c: StartingClient, agentId: string, opts: PointOptions): Promise<TurnPoint> {
  return c.outage.read('turnPoint', () => turnPointOf(c.temporal, agentId, opts));
}

export function lineage(c: StartingClient, agentId: string): Promise<LineageStep[]> {
  return c.outage.read('lineage', () => lineageOf(c.temporal, agentId));
}

export function forksOf(c: StartingClient, agentIds: string | string[], opts: { depth?: number }): Promise<ForkByPoint[]> {
  return c.outage.read('forksOf', () => forksByPoint(c.temporal, agentIds, opts));
}

/** `from` (a point named by agent and turn) as the reference and origin it resolves to, before anything starts. */
async function resolveFrom(c: StartingClient, params: ForkParams): Promise<ForkParams> {
  if (!params.from || params.parent || params.parentRef) return params;
  const { from, ...rest } = params;
  const parsed = forkPointSchema.safeParse(from);
  if (!parsed.success) throw new InvalidForkInputError(describeIssues(parsed.error).map((i) => `from.${i}`));
  const start = await pointStart(c, parsed.data.agentId, { ...(parsed.data.turn !== undefined ? { atTurn: parsed.data.turn } : {}), ...(parsed.data.runId ? { runId: parsed.data.runId } : {}) });
  return { ...inheritedBy(rest, start.runsAs), ...rest, ...start.at };
}

/** The cache-safe snapshot of an agent's conversation, as its requests send it. */
export async function snapshotOf(c: StartingClient, agentId: string): Promise<CacheSafeParams> {
  const [context, transcript, ref] = await Promise.all([readAgent(c, agentId, 'requestContext', (h) => h.query(requestContextQuery)), transcriptOf(c, agentId), prefixRefOf(c, agentId)]);
  // A compacted agent's requests start at its latest boundary: that is what it sends, and what a fork shares.
  const messages = viewMessages(transcript, ref.window);
  const snapshot: CacheSafeParams = { system: context.system, tools: context.tools, model: context.model, messages, maxTokens: context.maxTokens };
  snapshot.requestHashes = { ...cacheKeyComponents({ ...context }), prefix: messagePrefixHash(messages) };
  if (context.thinking) snapshot.thinking = context.thinking;
  if (context.toolChoice) snapshot.toolChoice = context.toolChoice as CacheSafeParams['toolChoice'];
  if (context.mcpServers) snapshot.mcpServers = context.mcpServers;
  return snapshot;
}
