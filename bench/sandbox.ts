/**
 * `npm run bench:sandbox`: what the OS sandbox adds to one Bash call, for a read-only fork
 * (nothing writable; the classifier advises beside the call) and a writing fork (its
 * workspace writable). The same commands run through the real Bash tool with the sandbox on
 * and off — off being the worker's explicit opt-out, where the classifier decides for the
 * read-only fork — interleaved so that machine noise hits both sides alike. Prints median
 * and p95 per side and of the added cost, and how this host caps a call's processes.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runBuiltinTool } from '../src/activities/tools';
import { sandboxAvailability } from '../src/activities/tools/sandbox';
import { classifyShellCommand } from '../src/activities/tools/shell';
import type { ToolContext } from '../src/activities/tools/types';
import { median, percentile, printTable } from './kit';

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const COMMANDS = ['true', 'ls -la', 'grep -rn needle . | head -5', 'wc -l README.md src/a.ts'];

async function main(): Promise<void> {
  const availability = await sandboxAvailability();
  if (!availability.available) throw new Error(`the sandbox is unavailable here: ${availability.reason}`);
  mkdirSync(path.resolve(__dirname, '..', '.scratch'), { recursive: true });
  const root = realpathSync(mkdtempSync(path.resolve(__dirname, '..', '.scratch', 'bench-sandbox-')));
  mkdirSync(path.join(root, 'src'));
  writeFileSync(path.join(root, 'README.md'), 'needle\n'.repeat(50));
  writeFileSync(path.join(root, 'src', 'a.ts'), 'export const needle = 1;\n'.repeat(50));
  const ctx = (sandboxed: boolean, writes: boolean): ToolContext => ({
    root,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    writePolicy: writes ? { kind: 'workspace' } : { kind: 'none' },
    classifyShell: classifyShellCommand,
    shellSandbox: sandboxed ? { availability, require: false } : { availability: { available: false, reason: 'bench: off', allowUnsandboxed: true }, require: false },
  });
  const timed = async (command: string, sandboxed: boolean, writes: boolean): Promise<number> => {
    const t0 = process.hrtime.bigint();
    const out = await runBuiltinTool('Bash', { command }, ctx(sandboxed, writes));
    if (out.isError) throw new Error(`${command}: ${out.content}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  for (const writes of [false, true]) {
    const on: number[] = [];
    const off: number[] = [];
    const added: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const command = COMMANDS[i % COMMANDS.length]!;
      // Alternate which side goes first, so warm caches favour neither.
      let sandboxed: number;
      let plain: number;
      if (i % 2 === 0) {
        sandboxed = await timed(command, true, writes);
        plain = await timed(command, false, writes);
      } else {
        plain = await timed(command, false, writes);
        sandboxed = await timed(command, true, writes);
      }
      on.push(sandboxed);
      off.push(plain);
      added.push(sandboxed - plain);
    }
    printTable(`Bash call, ${writes ? 'writing' : 'read-only'} fork (${CALLS} calls each, bubblewrap ${availability.version}, processes capped by ${availability.processCap.kind})`, [
      ['without sandbox: median / p95', `${ms(median(off))} / ${ms(percentile(off, 95))}`],
      ['with sandbox: median / p95', `${ms(median(on))} / ${ms(percentile(on, 95))}`],
      ['added by the sandbox: median / p95', `${ms(median(added))} / ${ms(percentile(added, 95))}`],
    ]);
  }
  rmSync(root, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
