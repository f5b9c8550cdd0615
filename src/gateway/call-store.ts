/**
 * The gateway's finished calls on disk: one file per call key, holding the provider's
 * response exactly as it arrived (status, headers, body bytes) and the hash of the request
 * it answers. Written atomically (temp file + rename), so a reader sees a whole entry or
 * none; versioned and checked on read, so a file from another version or a torn disk is
 * "not there" (the call is made again), never a wrong answer.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';

const STORED_VERSION = 1;

const storedSchema = z.object({
  v: z.literal(STORED_VERSION),
  key: z.string(),
  requestSha256: z.string(),
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

export class CallStore {
  constructor(
    readonly dir: string,
    private readonly maxAgeMs: number,
  ) {
    // Responses are the conversation's content: readable by this user only.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private file(key: string): string {
    return join(this.dir, `${key}.json`);
  }

  /** The stored answer to this exact request under this key, if any. */
  get(key: string, requestSha256: string): StoredCall | undefined {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.file(key), 'utf8'));
    } catch {
      return undefined;
    }
    const parsed = storedSchema.safeParse(raw);
    if (!parsed.success || parsed.data.key !== key || parsed.data.requestSha256 !== requestSha256) return undefined;
    return { status: parsed.data.status, headers: parsed.data.headers, body: Buffer.from(parsed.data.body, 'base64') };
  }

  put(key: string, requestSha256: string, call: StoredCall): void {
    const entry = { v: STORED_VERSION, key, requestSha256, status: call.status, headers: call.headers, body: call.body.toString('base64') };
    const tmp = join(this.dir, `.${randomUUID()}.tmp`);
    writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
    renameSync(tmp, this.file(key));
  }

  /** Drops entries (and stray temp files) older than the store's age limit; returns how many. */
  sweep(now = Date.now()): number {
    let dropped = 0;
    for (const name of readdirSync(this.dir)) {
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
