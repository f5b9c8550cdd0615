/**
 * The gateway's finished calls on disk: one file per call key, holding the provider's
 * response exactly as it arrived (status, headers, body bytes) and the hash of the request
 * it answers. The directory is private (private-dir.ts: 0700, this user's alone; files
 * 0600); every entry is authenticated with the directory's key and bound to its call key and
 * request hash, so a planted or moved file is never replayed; with payload encryption keys
 * set (passed in as the store's sealer), entries are encrypted with the payload codec.
 * Written atomically (temp file + rename), so a reader sees a whole entry or none; versioned
 * and checked on read, so a file from another version or a torn disk is "not there" (the
 * call is made again), never a wrong answer.
 */
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { openEntry, sealEntry, type PrivateStore } from '../shared/wire/private-store';
import { openPrivateStore } from './private-dir';

const valueSchema = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  /** The response body, base64: SSE text or JSON, byte for byte. */
  body: z.string(),
});

export interface StoredCall {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What an entry is bound to: its call key and the request it answers. */
const identityOf = (key: string, requestSha256: string) => JSON.stringify(['gateway-call', key, requestSha256]);

export class CallStore {
  readonly dir: string;
  private readonly store: PrivateStore;

  /** `dir` as a path is opened as a private store here (refused when not this user's alone); pass an opened one to seal entries. */
  constructor(
    dir: string | PrivateStore,
    private readonly maxAgeMs: number,
  ) {
    this.store = typeof dir === 'string' ? openPrivateStore(dir, { label: 'the gateway --dir (FORKFLOW_GATEWAY_DIR)' }) : dir;
    this.dir = this.store.dir;
  }

  private file(key: string): string {
    return join(this.dir, `${key}.json`);
  }

  /** The stored answer to this exact request under this key, if any. */
  async get(key: string, requestSha256: string): Promise<StoredCall | undefined> {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.file(key), 'utf8'));
    } catch {
      return undefined;
    }
    const parsed = valueSchema.safeParse(await openEntry(this.store, identityOf(key, requestSha256), raw));
    if (!parsed.success) return undefined;
    return { status: parsed.data.status, headers: parsed.data.headers, body: Buffer.from(parsed.data.body, 'base64') };
  }

  async put(key: string, requestSha256: string, call: StoredCall): Promise<void> {
    const entry = await sealEntry(this.store, identityOf(key, requestSha256), { status: call.status, headers: call.headers, body: call.body.toString('base64') });
    const tmp = join(this.dir, `.${randomUUID()}.tmp`);
    writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
    renameSync(tmp, this.file(key));
  }

  /** Drops entries (and stray temp files) older than the store's age limit; returns how many. */
  sweep(now = Date.now()): number {
    let dropped = 0;
    for (const name of readdirSync(this.dir)) {
      if (name === 'store.key') continue;
      const path = join(this.dir, name);
      try {
        if (now - statSync(path).mtimeMs > this.maxAgeMs) {
          rmSync(path, { force: true });
          dropped++;
        }
      } catch {
        // Gone meanwhile: nothing to drop.
      }
    }
    return dropped;
  }
}
