/**
 * Test helpers for autoDream and away summaries: agent runs ("sessions") of a memory scope,
 * waiting for visibility to show them, the scope's state file, and what a run's history holds.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { defaultStateDir, readDreamState, writeDreamState } from '../../src/activities/dream';
import { emptyDreamState, type DreamState } from '../../src/shared/dream/state';
import type { ForkInputJson } from '../../src/shared/wire/fork-input';
import { SA } from '../../src/shared/wire/search-attributes';
import type { ForkResult } from '../../src/shared/wire/status';
import type { Harness } from './env';
import { waitFor } from './wait';

/** A fresh scope name (the dev server is shared by every test file of a run). */
export function uniqueScope(name: string): string {
  return `${name}-${randomUUID().slice(0, 6)}`;
}

export interface ScopeDirs {
  scope: string;
  memoryDir: string;
  stateDir: string;
}

/** A scope with its memory directory under the harness workspace and the default state directory. */
export function scopeIn(h: Harness, name: string): ScopeDirs {
  const scope = uniqueScope(name);
  return { scope, memoryDir: join(h.workspaceRoot, 'memory', scope), stateDir: defaultStateDir(h.workspaceRoot, scope) };
}

/** Starts an agent run tagged with the scope (as forkWorkflow will once it takes a memoryScope input). */
export async function startSession(h: Harness, scope: string, id: string, prompt: string, taskQueue = h.taskQueue): Promise<WorkflowHandle> {
  const input: ForkInputJson = { prompt, overrides: { agentId: id }, forkLabel: 'session' };
  return h.client.workflow.start('forkWorkflow', {
    args: [input],
    taskQueue,
    workflowId: id,
    typedSearchAttributes: [
      { key: SA.memoryScope, value: scope },
      { key: SA.agentId, value: id },
      { key: SA.label, value: 'session' },
      { key: SA.querySource, value: 'agent:builtin:fork' },
    ],
  });
}

/** Runs a session to completion. */
export async function runSession(h: Harness, scope: string, id: string, prompt: string): Promise<ForkResult> {
  return (await (await startSession(h, scope, id, prompt)).result()) as ForkResult;
}

/** Waits until visibility answers `query` with at least `n` executions (visibility is eventually consistent). */
export async function waitForVisible(h: Harness, query: string, n: number): Promise<void> {
  await waitFor(async () => (await h.client.workflow.count(query)).count >= n || undefined, `visibility to show ${n} for ${query}`);
}

export function closedSessionsQuery(scope: string): string {
  return `WorkflowType = 'forkWorkflow' AND ForkMemoryScope = '${scope}' AND ExecutionStatus != 'Running'`;
}

export async function setDreamState(dirs: ScopeDirs, patch: Partial<DreamState>): Promise<void> {
  await writeDreamState(dirs.stateDir, { ...emptyDreamState(dirs.scope), ...patch });
}

export function dreamState(dirs: ScopeDirs): Promise<DreamState> {
  return readDreamState(dirs.stateDir, dirs.scope);
}

export function hoursAgo(hours: number, from = Date.now()): string {
  return new Date(from - hours * 3_600_000).toISOString();
}

/** Activity types a run scheduled, in order (proves which gates ran). */
export async function scheduledActivities(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?');
}

/** A model-script line: one tool call. */
export const tool = (name: string, input: unknown): string => `@tool ${name} ${JSON.stringify(input)}`;

/** A Bash step that holds the fork until `gate` exists (read-only, so a memory fork may run it). */
export const holdUntil = (gate: string): string => tool('Bash', { command: `while [ ! -f ${gate} ]; do sleep 0.05; done; echo released` });
