/**
 * A scope's sessions from Temporal: counted and listed through visibility, and their
 * transcripts read through each run's public `transcriptPage` query (Temporal answers it on a
 * closed run by replaying it on a worker). The transcript of a run that refuses it
 * (skipTranscript) or cannot answer in time is noted, not guessed.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { MessageParam } from '../../shared/messages-api/anthropic';
import { runKeyOf, sessionsQuery } from '../../shared/dream/names';
import { pageBytesFor, transcriptPageQuery } from '../../shared/wire/messages';
import { SA } from '../../shared/wire/search-attributes';
import { firstLineOf, renderIndex, renderSession, type IndexEntry, type SessionMeta } from './render';

/** Listing stops here: a scope with more sessions than this since its last consolidation is summarised from the newest. */
const LIST_CAP = 5_000;
/** A transcript query that takes longer (no worker for that run's queue, say) is given up on. */
const QUERY_TIMEOUT_MS = 20_000;

export function metaOf(info: WorkflowExecutionInfo): SessionMeta {
  const sa = info.typedSearchAttributes;
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    label: sa.get(SA.label),
    querySource: sa.get(SA.querySource),
    state: sa.get(SA.state),
    temporalStatus: info.status.name,
    startedAt: info.startTime.toISOString(),
    closedAt: info.closeTime?.toISOString(),
  };
}

/** Sessions of a scope closed in (since, until]: a count, from visibility alone. */
export async function countSessions(client: Client, scope: string, since: string | null, until: string): Promise<number> {
  const { count } = await client.workflow.count(sessionsQuery(scope, since, until));
  return count;
}

/** The newest `max` sessions closed in (since, until], newest first, and how many there were. */
export async function listSessions(client: Client, scope: string, since: string | null, until: string, max: number): Promise<{ sessions: SessionMeta[]; total: number }> {
  const all: SessionMeta[] = [];
  for await (const info of client.workflow.list({ query: sessionsQuery(scope, since, until) })) {
    all.push(metaOf(info));
    if (all.length >= LIST_CAP) break;
  }
  all.sort((a, b) => (b.closedAt ?? '').localeCompare(a.closedAt ?? ''));
  return { sessions: all.slice(0, max), total: all.length };
}

/**
 * The messages the run holds (not a prefix it holds by reference), a page at a time, so a
 * session of any size is read; refused like `transcript` under skipTranscript.
 */
async function heldMessages(client: Client, meta: SessionMeta): Promise<MessageParam[]> {
  const handle = client.workflow.getHandle(meta.workflowId, meta.runId);
  const out: MessageParam[] = [];
  let from = 0;
  for (;;) {
    const page = await handle.query(transcriptPageQuery, { from, maxBytes: pageBytesFor(client) });
    if (page.prefix && from < page.prefix.count) {
      from = page.prefix.count;
      continue;
    }
    out.push(...page.messages);
    from += page.messages.length;
    if (page.messages.length === 0 || from >= page.total) return out;
  }
}

async function readTranscript(client: Client, meta: SessionMeta): Promise<{ messages?: MessageParam[]; why?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${QUERY_TIMEOUT_MS / 1000} s`)), QUERY_TIMEOUT_MS);
  });
  try {
    const messages = await Promise.race([heldMessages(client, meta), timeout]);
    return { messages };
  } catch (err) {
    return { why: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

export interface StagedSessions {
  dir: string;
  staged: number;
  total: number;
  /** Sessions whose transcript could not be read (they still get a file saying why). */
  unavailable: number;
}

/**
 * Writes the newest sessions' transcripts into `dir` (INDEX.md plus one file each), then makes
 * the folder read-only: the fork may read it, nothing may change it while the fork runs.
 */
export async function stageSessions(
  client: Client,
  args: { scope: string; since: string | null; until: string; max: number; dir: string; onProgress?: () => void },
): Promise<StagedSessions> {
  // Session transcripts: readable by this user alone (the fork runs as it), never by others.
  await mkdir(args.dir, { recursive: true, mode: 0o700 });
  const { sessions, total } = args.max > 0 ? await listSessions(client, args.scope, args.since, args.until, args.max) : { sessions: [], total: 0 };
  const entries: IndexEntry[] = [];
  let unavailable = 0;
  for (const [i, meta] of sessions.entries()) {
    const { messages, why } = await readTranscript(client, meta);
    if (!messages) unavailable++;
    const file = `${String(i + 1).padStart(3, '0')}-${runKeyOf(meta.workflowId)}.md`;
    await writeFile(path.join(args.dir, file), renderSession(meta, messages, why), { mode: 0o400 });
    entries.push({ file, meta, firstLine: firstLineOf(messages) });
    args.onProgress?.();
  }
  await writeFile(path.join(args.dir, 'INDEX.md'), renderIndex(args.scope, entries, total, args.since), { mode: 0o400 });
  await chmod(args.dir, 0o500);
  return { dir: args.dir, staged: entries.length, total, unavailable };
}
