/** A block of 12 free consecutive ports for a self-hosted stack (scripts/stack/config.ts `portsFrom`). */
import { createServer } from 'node:net';

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Below 32768: the server keeps membership ports in a smallint column. */
export async function freeStackPorts(): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 1_000) * 12;
    const probes = await Promise.all(Array.from({ length: 12 }, (_, i) => portFree(base + i)));
    if (probes.every(Boolean)) return base;
  }
}
