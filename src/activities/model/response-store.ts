/**
 * Exactly-once model billing. A model response that has fully arrived is written here
 * before the activity reports it; a retried attempt of the same call (same workflow run,
 * same activity id, same request) returns the kept response instead of asking the provider
 * again. So a worker that dies, or a server that is down, between "the response arrived" and
 * "the result is in history" costs no second prompt.
 *
 * The store is one owner's state: only `callModel` reads and writes it (and the tool
 * activity settles it). A run's entries for earlier turns are dropped as soon as a later
 * step of the run shows the workflow recorded them, and `sweep` drops whatever a finished
 * run left behind.
 *
 * `FileResponseStore` keeps entries as files in a private directory (src/gateway/private-dir.ts:
 * 0700, this user's alone), each file 0600, written atomically (a temporary name, then
 * rename) so a SIGKILL never leaves half an entry. Every entry is authenticated with the
 * directory's key and bound to its call and to the digest of the request it answers, so a
 * planted or moved file is never replayed; with payload encryption keys set, its content is
 * encrypted with the payload codec. It survives a process crash; for work that moves between
 * machines, point every worker at the same directory (and key) on shared storage.
 */
import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ModelCallResult } from '../../shared/wire/activity-io';
import type { MessagesRequest } from '../../shared/messages-api/anthropic';
import { openEntry, sealEntry, type PrivateStore } from '../../shared/wire/private-store';
import { usageSchema } from '../../shared/tree/tree-ledger';
import { requestFactsSchema } from '../../shared/prefix/cache-break';

/** Which call a response belongs to: retries of one call share all of it. */
export interface CallKey {
  namespace: string;
  workflowId: string;
  runId: string;
  activityId: string;
  turn: number;
}

export interface ResponseStore {
  /** The response an earlier attempt of this call kept for the request with digest `requestSha256`, if any. */
  get(key: CallKey, requestSha256: string): Promise<ModelCallResult | undefined>;
  /** Starts writing at once, before it returns; `requestSha256` is the digest of the request it answers. */
  put(key: CallKey, result: ModelCallResult, requestSha256: string): Promise<void>;
  /**
   * The request an earlier attempt of this call left: a retry sends it without reading the
   * conversation from the workflow first (a query that would wait for the workflow to leave
   * a dead worker's sticky queue).
   */
  getRequest(key: CallKey): Promise<MessagesRequest | undefined>;
  putRequest(key: CallKey, request: MessagesRequest): Promise<void>;
  /**
   * What an earlier attempt of this call did with the request with digest `requestSha256`
   * (delivery `batch`): `since`, when it was about to submit it (kept before the submit), and
   * `batchId` once the provider took it. A retry polls that batch instead of submitting again,
   * or, with `since` alone, looks for its `custom_id` among the batches created since.
   */
  getBatch?(key: CallKey, requestSha256: string): Promise<BatchMark | undefined>;
  putBatch?(key: CallKey, mark: BatchMark, requestSha256: string): Promise<void>;
  /** Drops the run's entries for turns before this one: the workflow has recorded them. */
  settle(key: Pick<CallKey, 'namespace' | 'workflowId' | 'runId' | 'turn'>): Promise<void>;
}

/** A batched call's submission as kept: when it was about to be submitted (ms since the epoch, the worker's clock) and its batch. */
export interface BatchMark {
  since: number;
  batchId?: string;
  /** The provider refused the submit (an HTTP error): there is nothing to look for. */
  refused?: true;
}

/** The digest a kept response is bound to: sha256 of the request body as sent (JSON). */
export function requestDigest(request: MessagesRequest): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

const resultSchema = z.object({
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
});

const requestSchema = z.object({ model: z.string(), max_tokens: z.number(), messages: z.array(z.unknown()) }).passthrough();

/** What an entry's MAC binds it to: the call (namespace included) and the kind of entry. */
type EntryKind = 'response' | 'request' | 'batch';

const identityOf = (key: CallKey, kind: EntryKind) => JSON.stringify([kind, key.namespace, key.workflowId, key.runId, key.activityId, key.turn]);

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

export interface FileResponseStoreOptions {
  /** A run folder unchanged for this long is dropped by `sweep` (default one day). */
  maxAgeMs?: number;
  /**
   * An append-only JSON-lines file recording each response kept (`{"kept": requestId, "at":
   * ms since the epoch, ...}`), for billing audits: which provider requests reached the store,
   * and when. Default: none. Created 0600.
   */
  journal?: string;
}

export class FileResponseStore implements ResponseStore {
  private readonly maxAgeMs: number;
  private readonly journal?: string;
  readonly dir: string;

  constructor(
    private readonly store: PrivateStore,
    opts: FileResponseStoreOptions = {},
  ) {
    this.dir = store.dir;
    this.maxAgeMs = opts.maxAgeMs ?? 24 * 3_600_000;
    this.journal = opts.journal;
  }

  private runDir(key: Pick<CallKey, 'namespace' | 'workflowId' | 'runId'>): string {
    return join(this.dir, hash(`${key.namespace}\n${key.workflowId}\n${key.runId}`));
  }

  private file(key: CallKey, kind: EntryKind = 'response'): string {
    return join(this.runDir(key), `${key.turn}-${hash(key.activityId)}${kind === 'response' ? '' : `.${kind}`}.json`);
  }

  /** The entry's value when it is authentic and this call's, else undefined. */
  private async read(key: CallKey, kind: EntryKind): Promise<unknown> {
    let text: string;
    try {
      text = await readFile(this.file(key, kind), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return undefined;
    }
    return openEntry(this.store, identityOf(key, kind), raw);
  }

  /**
   * Atomic: a reader sees the whole entry or none. The file is written synchronously once
   * the entry is sealed (encryption, when on, is synchronous work too): between the last
   * byte of a response and this write, a worker that dies costs a second call, so the write
   * does not wait behind other work on the event loop.
   */
  private async write(key: CallKey, kind: EntryKind, value: unknown): Promise<void> {
    const entry = await sealEntry(this.store, identityOf(key, kind), value);
    const dir = this.runDir(key);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `.${randomUUID()}.tmp`);
    writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
    renameSync(tmp, this.file(key, kind));
  }

  async get(key: CallKey, requestSha256: string): Promise<ModelCallResult | undefined> {
    const value = (await this.read(key, 'response')) as { requestSha256?: unknown; result?: unknown } | undefined;
    // A response to another request under this call's name (or none) is not this call's answer.
    if (!value || value.requestSha256 !== requestSha256) return undefined;
    const parsed = resultSchema.safeParse(value.result);
    return parsed.success ? (parsed.data as ModelCallResult) : undefined;
  }

  async put(key: CallKey, result: ModelCallResult, requestSha256: string): Promise<void> {
    await this.write(key, 'response', { requestSha256, result });
    if (this.journal) {
      appendFileSync(this.journal, `${JSON.stringify({ kept: result.requestId ?? null, at: Date.now(), workflowId: key.workflowId, runId: key.runId, activityId: key.activityId, turn: key.turn })}\n`, { mode: 0o600 });
    }
  }

  async getRequest(key: CallKey): Promise<MessagesRequest | undefined> {
    const value = await this.read(key, 'request');
    // Checked, but returned as stored: byte for byte the request the earlier attempt sent.
    return requestSchema.safeParse(value).success ? (value as MessagesRequest) : undefined;
  }

  putRequest(key: CallKey, request: MessagesRequest): Promise<void> {
    return this.write(key, 'request', request);
  }

  async getBatch(key: CallKey, requestSha256: string): Promise<BatchMark | undefined> {
    const value = (await this.read(key, 'batch')) as { requestSha256?: unknown; batchId?: unknown; since?: unknown; refused?: unknown } | undefined;
    if (!value || value.requestSha256 !== requestSha256 || typeof value.since !== 'number') return undefined;
    return { since: value.since, ...(typeof value.batchId === 'string' ? { batchId: value.batchId } : {}), ...(value.refused === true ? { refused: true as const } : {}) };
  }

  putBatch(key: CallKey, mark: BatchMark, requestSha256: string): Promise<void> {
    return this.write(key, 'batch', { ...mark, requestSha256 });
  }

  async settle(key: Pick<CallKey, 'namespace' | 'workflowId' | 'runId' | 'turn'>): Promise<void> {
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
