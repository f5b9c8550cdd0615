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
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ModelCallResult } from '../../shared/activity-io';

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
  put(key: CallKey, result: ModelCallResult): Promise<void>;
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
    usage: z.object({
      inputTokens: z.number(),
      outputTokens: z.number(),
      cacheReadInputTokens: z.number(),
      cacheCreationInputTokens: z.number(),
    }),
    model: z.string(),
    requestId: z.string().optional(),
  }),
});

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

export interface FileResponseStoreOptions {
  /** Entries older than this are dropped by `sweep` (default one day). */
  maxAgeMs?: number;
}

export class FileResponseStore implements ResponseStore {
  private readonly maxAgeMs: number;

  constructor(
    readonly dir: string,
    opts: FileResponseStoreOptions = {},
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? 24 * 3_600_000;
  }

  private runDir(key: CallKey): string {
    return join(this.dir, hash(`${key.namespace}\n${key.workflowId}\n${key.runId}`));
  }

  private file(key: CallKey): string {
    return join(this.runDir(key), `${key.turn}-${hash(key.activityId)}.json`);
  }

  async get(key: CallKey): Promise<ModelCallResult | undefined> {
    let text: string;
    try {
      text = await readFile(this.file(key), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    const stored = storedSchema.safeParse(parsed);
    // Unreadable or someone else's entry (a hash collision): ask the provider again.
    if (!stored.success) return undefined;
    const k = stored.data.key;
    if (k.workflowId !== key.workflowId || k.runId !== key.runId || k.activityId !== key.activityId || k.turn !== key.turn) return undefined;
    return stored.data.result as ModelCallResult;
  }

  async put(key: CallKey, result: ModelCallResult): Promise<void> {
    const dir = this.runDir(key);
    await mkdir(dir, { recursive: true });
    const body = JSON.stringify({ v: STORED_VERSION, key: { workflowId: key.workflowId, runId: key.runId, activityId: key.activityId, turn: key.turn }, result });
    const tmp = join(dir, `.${randomUUID()}.tmp`);
    await writeFile(tmp, body);
    await rename(tmp, this.file(key));
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

  /** Drops entries (and temporary files) older than the maximum age; returns how many. */
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
      const names = await readdir(dir).catch(() => [] as string[]);
      let left = names.length;
      for (const name of names) {
        const info = await stat(join(dir, name)).catch(() => undefined);
        if (info && now - info.mtimeMs > this.maxAgeMs) {
          await rm(join(dir, name), { force: true });
          dropped++;
          left--;
        }
      }
      if (left === 0) await rm(dir, { recursive: true, force: true });
    }
    return dropped;
  }
}
