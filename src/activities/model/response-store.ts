/**
 * Exactly-once model billing. A model response that has fully arrived is written here
 * before the activity reports it; a retried attempt of the same call (same workflow run,
 * same activity id) returns the kept response instead of asking the provider again. So a
 * worker that dies, or a server that is down, between "the response arrived" and "the
 * result is in history" costs no second prompt.
 *
 * The store is one owner's state: only `callModel` reads and writes it. A run's entries
 * for earlier turns are dropped when its next turn is asked for (by then the workflow has
 * recorded them), and `sweep` drops whatever a finished run left behind.
 *
 * `FileResponseStore` keeps entries as files: atomic (write to a temporary name, then
 * rename), so a SIGKILL never leaves half an entry. It survives a process crash; for work
 * that moves between machines, point every worker at the same directory on shared storage.
 */
import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ModelCallResult } from '../../shared/activity-io';
import type { MessagesRequest } from '../../shared/anthropic';
import { usageSchema } from '../../shared/tree-ledger';
import { requestFactsSchema } from '../../shared/cache-break';

/** Which call a response belongs to: retries of one call share all of it. */
export interface CallKey {
  namespace: string;
  workflowId: string;
  runId: string;
  activityId: string;
  turn: number;
}

export interface ResponseStore {
  /** The response an earlier attempt of this call kept, if any. */
  get(key: CallKey): Promise<ModelCallResult | undefined>;
  /** Starts writing at once, before it returns (a file store writes synchronously). */
  put(key: CallKey, result: ModelCallResult): Promise<void>;
  /**
   * The request an earlier attempt of this call left: a retry sends it without reading the
   * conversation from the workflow first (a query that would wait for the workflow to leave
   * a dead worker's sticky queue).
   */
  getRequest(key: CallKey): Promise<MessagesRequest | undefined>;
  putRequest(key: CallKey, request: MessagesRequest): Promise<void>;
  /** Drops the run's entries for turns before this one: the workflow has recorded them. */
  settle(key: CallKey): Promise<void>;
}

/** Entries are versioned: a later layout can read or skip an older one. */
const STORED_VERSION = 1;

const storedSchema = z.object({
  v: z.literal(STORED_VERSION),
  key: z.object({ workflowId: z.string(), runId: z.string(), activityId: z.string(), turn: z.number().int() }),
  result: z.object({
    message: z.object({ role: z.literal('assistant'), content: z.array(z.object({ type: z.string() }).passthrough()) }),
    stopReason: z.string().nullable(),
    usage: usageSchema,
    model: z.string(),
    requestId: z.string().optional(),
    request: requestFactsSchema.optional(),
    ttlMs: z.number().int().min(1).optional(),
    // Context management (src/shared/context/call.ts): kept whole, so a handed-back reply reads as the first.
    compaction: z.object({ usage: usageSchema, tokensBefore: z.number().int().min(0) }).optional(),
    cleared: z.object({ toolUses: z.number().int().min(0), thinkingTurns: z.number().int().min(0), tokens: z.number().int().min(0) }).optional(),
    requestTokens: z.number().int().min(0).optional(),
  }),
});

const requestSchema = z.object({
  v: z.literal(STORED_VERSION),
  key: storedSchema.shape.key,
  request: z.object({ model: z.string(), max_tokens: z.number(), messages: z.array(z.unknown()) }).passthrough(),
});

const sameCall = (a: { workflowId: string; runId: string; activityId: string; turn: number }, b: CallKey) =>
  a.workflowId === b.workflowId && a.runId === b.runId && a.activityId === b.activityId && a.turn === b.turn;

/** What an entry records of its call (the namespace is part of the folder's hash). */
const callOf = (key: CallKey) => ({ workflowId: key.workflowId, runId: key.runId, activityId: key.activityId, turn: key.turn });

/** Runs a synchronous write now and reports it as a promise (the interface is async for remote stores). */
function settled(write: () => void): Promise<void> {
  try {
    write();
    return Promise.resolve();
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

export interface FileResponseStoreOptions {
  /** A run folder unchanged for this long is dropped by `sweep` (default one day). */
  maxAgeMs?: number;
  /**
   * An append-only JSON-lines file recording each response kept (`{"kept": requestId, "at":
   * ms since the epoch, ...}`), for billing audits: which provider requests reached the store,
   * and when. Default: none.
   */
  journal?: string;
}

export class FileResponseStore implements ResponseStore {
  private readonly maxAgeMs: number;
  private readonly journal?: string;

  constructor(
    readonly dir: string,
    opts: FileResponseStoreOptions = {},
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? 24 * 3_600_000;
    this.journal = opts.journal;
  }

  private runDir(key: CallKey): string {
    return join(this.dir, hash(`${key.namespace}\n${key.workflowId}\n${key.runId}`));
  }

  private file(key: CallKey, kind: 'response' | 'request' = 'response'): string {
    return join(this.runDir(key), `${key.turn}-${hash(key.activityId)}${kind === 'request' ? '.request' : ''}.json`);
  }

  /** The parsed entry, or undefined when there is none or it cannot be read. */
  private async read(file: string): Promise<unknown> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  /**
   * Atomic: a reader sees the whole entry or none. Synchronous on purpose: between the last
   * byte of a response and this write, a worker that dies costs a second call, so the write
   * does not wait behind other work on the event loop (it takes well under a millisecond).
   */
  private write(file: string, key: CallKey, entry: Record<string, unknown>): void {
    const dir = this.runDir(key);
    mkdirSync(dir, { recursive: true });
    const body = JSON.stringify({ v: STORED_VERSION, key: callOf(key), ...entry });
    const tmp = join(dir, `.${randomUUID()}.tmp`);
    writeFileSync(tmp, body);
    renameSync(tmp, file);
  }

  async get(key: CallKey): Promise<ModelCallResult | undefined> {
    const stored = storedSchema.safeParse(await this.read(this.file(key)));
    // Unreadable or someone else's entry (a hash collision): ask the provider again.
    if (!stored.success || !sameCall(stored.data.key, key)) return undefined;
    return stored.data.result as ModelCallResult;
  }

  put(key: CallKey, result: ModelCallResult): Promise<void> {
    return settled(() => {
      this.write(this.file(key), key, { result });
      if (this.journal) appendFileSync(this.journal, `${JSON.stringify({ kept: result.requestId ?? null, at: Date.now(), ...callOf(key) })}\n`);
    });
  }

  async getRequest(key: CallKey): Promise<MessagesRequest | undefined> {
    const stored = requestSchema.safeParse(await this.read(this.file(key, 'request')));
    if (!stored.success || !sameCall(stored.data.key, key)) return undefined;
    return stored.data.request as unknown as MessagesRequest;
  }

  putRequest(key: CallKey, request: MessagesRequest): Promise<void> {
    return settled(() => this.write(this.file(key, 'request'), key, { request }));
  }

  async settle(key: CallKey): Promise<void> {
    const dir = this.runDir(key);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    const stale = names.filter((name) => {
      const turn = Number(name.split('-')[0]);
      return Number.isInteger(turn) && turn < key.turn;
    });
    await Promise.all(stale.map((name) => rm(join(dir, name), { force: true })));
  }

  /**
   * Sweeps now and then every `everyMs` (default: an hour, or the maximum age when shorter)
   * for as long as the process runs: a worker runs for weeks, and the last turn's entries of
   * every run it finished stay until a sweep. The timer does not keep the process alive.
   */
  keepSwept(everyMs = Math.min(this.maxAgeMs, 3_600_000)): NodeJS.Timeout {
    const sweep = () => void this.sweep().catch(() => undefined);
    sweep();
    return setInterval(sweep, everyMs).unref();
  }

  /**
   * Drops the folders of runs that wrote nothing for the maximum age, entries and temporary
   * files alike; returns how many files went. A folder's time is its last change (an entry
   * written, renamed into place or settled), so everything in it is at least that old: one
   * `stat` per run instead of one per file, which a worker pays at its start (a folder shared
   * by many workers holds tens of thousands of files). A run still writing keeps its folder;
   * its older turns go as it settles them.
   */
  async sweep(now = Date.now()): Promise<number> {
    let runs: string[];
    try {
      runs = await readdir(this.dir);
    } catch {
      return 0;
    }
    let dropped = 0;
    for (const run of runs) {
      const dir = join(this.dir, run);
      const info = await stat(dir).catch(() => undefined);
      if (!info?.isDirectory() || now - info.mtimeMs <= this.maxAgeMs) continue;
      const names = await readdir(dir).catch(() => [] as string[]);
      await rm(dir, { recursive: true, force: true });
      dropped += names.length;
    }
    return dropped;
  }
}
