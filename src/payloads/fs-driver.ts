/**
 * A filesystem StorageDriver for the SDK's external payload storage: payloads over the
 * threshold are written under one folder that every worker and client of a deployment
 * shares (the dev stack's `.forkflow/blobs`, or a shared mount), and history keeps a
 * reference. Content-addressed by sha256, so writing the same bytes twice costs nothing.
 *
 * A payload's data is cut into fixed-size chunks, each its own blob, plus a small manifest:
 * sibling forks started from one inline parent have inputs that differ only after the
 * parent (the client serializes `parent` first), so their leading chunks are the same
 * blobs and the shared prefix is stored once. Claims come from history and are treated as
 * hostile: only a well-formed hex digest ever becomes a path, and every blob read is
 * checked against its digest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageDriverClaim, type Payload, type StorageDriver, type StorageDriverRetrieveContext, type StorageDriverStoreContext } from '@temporalio/common';
import { z } from 'zod';

/**
 * Default chunk size: 256 KiB, the SDK's threshold, so a payload just over it is two blobs
 * plus its manifest, and siblings that differ only at the end rewrite at most ~256 KiB.
 */
export const DEFAULT_CHUNK_BYTES = 256 * 1024;

const digestSchema = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 digest in lower-case hex');
const claimSchema = z.strictObject({ v: z.literal('1'), manifest: digestSchema });
const manifestSchema = z.strictObject({
  v: z.literal(1),
  /** Payload metadata, values base64. */
  metadata: z.record(z.string(), z.string()),
  size: z.number().int().nonnegative(),
  chunks: z.array(digestSchema),
});
type Manifest = z.infer<typeof manifestSchema>;

/** Bytes this driver wrote and skipped (already there), for benchmarks and tests. */
export interface FsDriverStats {
  blobsWritten: number;
  bytesWritten: number;
  blobsReused: number;
  bytesReused: number;
  payloadsStored: number;
  payloadsRetrieved: number;
}

/** A blob a claim names is not in the (existing) blob folder: it was never written here. */
export class BlobNotFoundError extends Error {
  override name = 'BlobNotFoundError';
}

/** A claim, manifest or blob that is malformed or does not match its digest: no retry will read it. */
export class InvalidBlobError extends Error {
  override name = 'InvalidBlobError';
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function manifestOf(digest: string, bytes: Uint8Array): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new InvalidBlobError(`payload blob ${digest} is not a manifest (not JSON)`);
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) throw new InvalidBlobError(`payload blob ${digest} is not a manifest: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export class FsStorageDriver implements StorageDriver {
  readonly name = 'forkflow-fs';
  readonly type = 'forkflow.fs';
  readonly stats: FsDriverStats = { blobsWritten: 0, bytesWritten: 0, blobsReused: 0, bytesReused: 0, payloadsStored: 0, payloadsRetrieved: 0 };

  constructor(
    readonly dir: string,
    private readonly chunkBytes = DEFAULT_CHUNK_BYTES,
  ) {
    if (!Number.isInteger(chunkBytes) || chunkBytes <= 0) throw new Error(`chunk size must be a positive integer, got ${chunkBytes}`);
  }

  private rootChecked = false;

  /**
   * The blob folder holds every large payload (whole conversations when nothing is
   * encrypted): created closed to other users, and one this user made open to them earlier
   * is closed (its blobs then unreachable to others, whatever their own modes).
   */
  private async privateRoot(): Promise<void> {
    if (this.rootChecked) return;
    await mkdir(this.dir, { recursive: true, mode: 0o770 });
    const st = await stat(this.dir);
    if ((st.mode & 0o007) !== 0 && st.uid === process.geteuid?.()) await chmod(this.dir, st.mode & 0o770);
    this.rootChecked = true;
  }

  /** Where a blob lives: two levels of fan-out keep folders small. */
  pathOf(digest: string): string {
    return join(this.dir, 'sha256', digest.slice(0, 2), digest);
  }

  async store(_ctx: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const claims: StorageDriverClaim[] = [];
    for (const payload of payloads) {
      const data = payload.data ?? new Uint8Array();
      const chunks: string[] = [];
      // An empty payload is one empty chunk.
      for (let at = 0; at === 0 || at < data.length; at += this.chunkBytes) chunks.push(await this.put(data.subarray(at, at + this.chunkBytes)));
      const metadata = Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
      const manifest: Manifest = { v: 1, metadata, size: data.length, chunks };
      const digest = await this.put(Buffer.from(JSON.stringify(manifest)));
      this.stats.payloadsStored++;
      claims.push(new StorageDriverClaim({ v: '1', manifest: digest }));
    }
    return claims;
  }

  async retrieve(_ctx: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    const out: Payload[] = [];
    for (const claim of claims) {
      const parsed = claimSchema.safeParse(claim.claimData);
      if (!parsed.success) throw new InvalidBlobError(`not a ${this.name} claim: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      const manifestBytes = await this.get(parsed.data.manifest);
      const manifest = manifestOf(parsed.data.manifest, manifestBytes);
      const parts = await Promise.all(manifest.chunks.map((d) => this.get(d)));
      const data = Buffer.concat(parts);
      if (data.length !== manifest.size) throw new InvalidBlobError(`payload ${parsed.data.manifest} has ${data.length} bytes, its manifest says ${manifest.size}`);
      const metadata = Object.fromEntries(Object.entries(manifest.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]));
      this.stats.payloadsRetrieved++;
      out.push({ metadata, data: new Uint8Array(data.buffer, data.byteOffset, data.length) });
    }
    return out;
  }

  /** Writes a blob unless it is there already; concurrent writers of the same bytes both win. */
  private async put(bytes: Uint8Array): Promise<string> {
    const digest = sha256(bytes);
    const path = this.pathOf(digest);
    const existing = await stat(path).catch(() => undefined);
    if (existing?.size === bytes.length) {
      this.stats.blobsReused++;
      this.stats.bytesReused += bytes.length;
      return digest;
    }
    await this.privateRoot();
    // Never open to other users (group as the umask says: hosts of one deployment may share a group).
    await mkdir(join(path, '..'), { recursive: true, mode: 0o770 });
    // Write aside and rename: a reader never sees a half-written blob, whoever crashes when.
    const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, bytes, { flag: 'wx', mode: 0o660 });
      await rename(tmp, path);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    this.stats.blobsWritten++;
    this.stats.bytesWritten += bytes.length;
    return digest;
  }

  private async get(digest: string): Promise<Uint8Array> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.pathOf(digest));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        const noFolder = !(await stat(this.dir).catch(() => undefined));
        throw new BlobNotFoundError(`payload blob ${digest} is not in ${this.dir}${noFolder ? ' (the folder does not exist)' : ''}: every worker and client must share one blob folder (FORKFLOW_BLOB_DIR)`);
      }
      throw err;
    }
    if (sha256(bytes) !== digest) throw new InvalidBlobError(`payload blob ${digest} in ${this.dir} is corrupt (its content does not match its name)`);
    return bytes;
  }
}
