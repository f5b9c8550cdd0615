/**
 * The operator's check before a patch retirement step (docs/guides/patches.md): which open runs
 * of forkflow's workflow types could still replay through a patch's old branch, or still carry
 * its marker from before the patch was deprecated. Read from visibility, never from histories.
 *
 * Why start time stands for "build X": a run can hold history written by code older than X only
 * if it was open while such code ran, i.e. if it started before the last worker without X
 * stopped. forkflow records no build id of its own on runs (Worker Versioning's build id is
 * optional and, where used, pins a run to its build anyway), so the operator gives that moment.
 * The SDK itself lists every patch a run has met in the `TemporalChangeVersion` search
 * attribute, which narrows the answer to runs that have not met a given patch yet.
 */
import type { Client } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { z } from 'zod';
import { WORKFLOW_TYPES } from '../shared/wire/constants';

/** The search attribute the SDK fills with the ids of the patches a run has recorded (its markers). */
export const CHANGE_VERSION_ATTRIBUTE = 'TemporalChangeVersion';
const changeVersionKey = defineSearchAttributeKey(CHANGE_VERSION_ATTRIBUTE, SearchAttributeType.KEYWORD_LIST);

/** What to look for; `startedBefore` is an ISO 8601 time with an offset (e.g. 2026-12-07T18:00:00Z). */
export const openRunsQuerySchema = z.strictObject({
  startedBefore: z.iso.datetime({ offset: true }),
  /** Only runs whose recorded patches do not include this id (they can still take its old branch). */
  withoutPatch: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'a patch id: letters, digits, dot, dash, underscore').optional(),
  /** Only runs on this task queue; every queue when absent. */
  taskQueue: z.string().min(1).max(1000).optional(),
});
export type OpenRunsQuery = z.infer<typeof openRunsQuerySchema>;

/** One open run that the check reports. */
export interface OpenRun {
  workflowId: string;
  runId: string;
  type: string;
  taskQueue: string;
  startTime: string;
  /** The patch ids its history has recorded so far, as visibility has them. */
  patches: string[];
}

const quoted = (s: string): string => `"${s.replace(/["\\]/g, '\\$&')}"`;

/** The visibility query for `q` (validated): running, started before the time, of forkflow's types. */
export function openRunsVisibilityQuery(q: OpenRunsQuery): string {
  const parsed = openRunsQuerySchema.parse(q);
  const types = Object.values(WORKFLOW_TYPES).map(quoted).join(', ');
  const parts = [`ExecutionStatus = "Running"`, `StartTime < ${quoted(new Date(parsed.startedBefore).toISOString())}`, `WorkflowType IN (${types})`];
  if (parsed.taskQueue) parts.push(`TaskQueue = ${quoted(parsed.taskQueue)}`);
  // A keyword list compares per element: `!=` keeps runs whose list lacks the id; a run with no list at all has met no patch.
  if (parsed.withoutPatch) parts.push(`(${CHANGE_VERSION_ATTRIBUTE} IS NULL OR ${CHANGE_VERSION_ATTRIBUTE} != ${quoted(parsed.withoutPatch)})`);
  return parts.join(' AND ');
}

/** Lists the open runs `q` describes, oldest first. */
export async function listOpenRuns(client: Client, q: OpenRunsQuery): Promise<{ query: string; runs: OpenRun[] }> {
  const query = openRunsVisibilityQuery(q);
  const runs: OpenRun[] = [];
  for await (const info of client.workflow.list({ query })) {
    runs.push({
      workflowId: info.workflowId,
      runId: info.runId,
      type: info.type,
      taskQueue: info.taskQueue,
      startTime: info.startTime.toISOString(),
      patches: info.typedSearchAttributes.get(changeVersionKey) ?? [],
    });
  }
  runs.sort((a, b) => a.startTime.localeCompare(b.startTime));
  return { query, runs };
}
