/**
 * Where a stdio MCP server runs when its config names no `cwd`: a fresh private directory of
 * its own under the worker's state, never the agent's workspace (which a writing fork may
 * have filled with a planted `node_modules` or module), and gone when the session ends.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connectMcp } from '../../../src/activities/mcp/connect';
import { tempDir } from '../../kit/env';

/** A "server" that only says where it runs and exits: the connection fails with its stderr. */
const whereAmI = { command: process.execPath, args: ['-e', 'console.error("cwd=" + process.cwd()); process.exit(3)'] };

async function cwdOf(config: { command: string; args: string[]; cwd?: string }, scratchBase: string): Promise<string> {
  const err = await connectMcp(config, { scratchBase, timeoutMs: 10_000 }).then(
    () => new Error('connected'),
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
  const match = /cwd=(\S+)/.exec(err.message);
  if (!match) throw new Error(`no cwd in: ${err.message}`);
  return match[1]!;
}

test('a stdio server without a cwd runs in a fresh 0700 directory under the scratch base, removed when its session ends', async () => {
  const base = join(tempDir('mcp-state'), 'mcp-servers');
  const first = await cwdOf(whereAmI, base);
  const second = await cwdOf(whereAmI, base);
  expect(first.startsWith(`${base}/server-`)).toBe(true);
  expect(second).not.toBe(first);
  // The failed connection closed its session: its directory is gone, the base stays private.
  expect(existsSync(first)).toBe(false);
  expect(statSync(base).mode & 0o777).toBe(0o700);
});

test('a cwd the operator names is used as given', async () => {
  const own = tempDir('mcp-own');
  expect(await cwdOf({ ...whereAmI, cwd: own }, join(tempDir('mcp-state'), 'mcp-servers'))).toBe(own);
});

test('a stdio server gets none of the worker\'s secrets: only the minimal environment and the env its config sets', async () => {
  const saved = { ...process.env };
  Object.assign(process.env, { ANTHROPIC_API_KEY: 'sk-ant-worker', OPENAI_API_KEY: 'sk-worker', FORKFLOW_ENCRYPTION_KEY_FILE: '/keys.json' });
  try {
    const printEnv = { command: process.execPath, args: ['-e', 'console.error("env=" + Object.keys(process.env).sort().join(",")); process.exit(3)'], env: { DOCS_ROOT: '/srv' } };
    const err = await connectMcp(printEnv, { scratchBase: join(tempDir('mcp-state'), 'mcp-servers'), timeoutMs: 10_000 }).catch((e: unknown) => e as Error);
    const names = /env=(\S*)/.exec((err as Error).message)?.[1]?.split(',') ?? [];
    expect(names).toContain('DOCS_ROOT');
    expect(names.filter((n) => /KEY|TOKEN|SECRET/.test(n))).toEqual([]);
  } finally {
    process.env = saved;
  }
});
