/**
 * Shared test kit for the tool tests: real temporary workspaces (canonical paths, removed
 * afterwards) and a ToolContext that records heartbeats.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runBuiltinTool } from '../../../src/activities/tools';
import type { ToolContext, ToolOutcome, WritePolicy } from '../../../src/activities/tools/types';

export interface TempDir {
  /** Canonical absolute path of the directory. */
  dir: string;
  /** Writes a file (creating parents) and returns its absolute path. */
  file(rel: string, content: string | Buffer): string;
  remove(): void;
}

/** A fresh, canonical temporary directory. */
export function tempDir(prefix = 'forkflow-tools-'): TempDir {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  return {
    dir,
    file(rel, content) {
      const p = path.join(dir, rel);
      mkdirSync(path.dirname(p), { recursive: true });
      writeFileSync(p, content);
      return p;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestContext extends ToolContext {
  controller: AbortController;
  heartbeats: unknown[];
}

/**
 * The tool tests' default for Bash: the worker's explicit opt-out (no OS sandbox), so they
 * test the tool itself; sandbox.test.ts and the attacker tests pass a real sandbox.
 */
export const UNSANDBOXED = { availability: { available: false as const, reason: 'tool tests run without the sandbox', allowUnsandboxed: true }, require: false };

/** A ToolContext on `root`; workspace write policy and the explicit no-sandbox opt-out unless told otherwise. */
export function context(root: string, overrides: Partial<ToolContext> & { writePolicy?: WritePolicy } = {}): TestContext {
  const controller = new AbortController();
  const heartbeats: unknown[] = [];
  return {
    root,
    signal: controller.signal,
    heartbeat: (d?: unknown) => heartbeats.push(d),
    writePolicy: { kind: 'workspace' },
    shellSandbox: UNSANDBOXED,
    ...overrides,
    controller,
    heartbeats,
  };
}

/** Calls a tool through the public entry point. */
export function run(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  return runBuiltinTool(name, input, ctx);
}
