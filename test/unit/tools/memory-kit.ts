/**
 * Test kit for containment: a base directory holding a memory directory and, next to it,
 * an "outside" world with files a model would like to overwrite; a fingerprint of
 * everything outside the memory directory, to assert that nothing there changed.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { WritePolicy } from '../../../src/activities/tools/types';
import { context, tempDir, type TempDir, type TestContext } from './kit';

export interface MemoryWorld {
  base: TempDir;
  /** Canonical memory directory (inside `base`). */
  mem: string;
  /** Canonical directory outside the memory directory (inside `base`). */
  outside: string;
  /** A file outside that attacks try to overwrite. */
  secret: string;
  policy: WritePolicy;
  /** A context whose root is the memory directory and whose policy confines writes to it. */
  ctx(): TestContext;
  /** Every path under `base` except the memory directory, with its type and content. */
  fingerprint(): Record<string, string>;
}

export function memoryWorld(memName = 'mem'): MemoryWorld {
  const base = tempDir('forkflow-contain-');
  const mem = path.join(base.dir, memName);
  const outside = path.join(base.dir, 'outside');
  mkdirSync(mem);
  mkdirSync(outside);
  const secret = base.file('outside/secret.md', 'ORIGINAL secret\n');
  const policy: WritePolicy = { kind: 'within', dir: mem };
  return {
    base,
    mem,
    outside,
    secret,
    policy,
    ctx: () => context(mem, { writePolicy: policy }),
    fingerprint: () => fingerprint(base.dir, mem),
  };
}

function fingerprint(root: string, excluded: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (p === excluded) continue;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[p] = `link:${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[p] = 'dir';
        walk(p);
      } else if (st.isFile()) out[p] = `file:${st.nlink}:${readFileSync(p, 'utf8')}`;
      else out[p] = 'special';
    }
  };
  walk(root);
  return out;
}
