/**
 * The private directories of stdio MCP servers: a refused start leaves none (each retry's is
 * removed), and a worker that was killed leaves its own only until the next start on the host
 * sweeps those of processes that are gone, never a live worker's or another host's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectMcp } from '../../../src/activities/mcp/connect';
import { makeScratch, sweepScratch } from '../../../src/activities/mcp/scratch';

const HOST = hostname().replace(/[^A-Za-z0-9.]/g, '_').slice(0, 40) || 'host';

/** The id of a process that has exited (spawned and waited for). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  return r.pid;
}

describe('stdio MCP server directories', () => {
  let base: string;
  beforeEach(() => {
    base = join(mkdtempSync(join(tmpdir(), 'forkflow-mcp-scratch-')), 'mcp-servers');
  });

  it('a start refused five times (the server exits, speaks no MCP, or is missing) leaves no directory', async () => {
    const refusing = [
      { command: process.execPath, args: ['-e', 'process.stderr.write("no licence key\\n"); process.exit(3)'] },
      { command: process.execPath, args: ['-e', 'require("fs").writeFileSync("left-behind.txt", "x"); console.log("not json")'] },
      { command: 'forkflow-no-such-command' },
    ];
    for (let i = 0; i < 5; i++) {
      for (const config of refusing) await expect(connectMcp(config, { scratchBase: base, timeoutMs: 3_000 })).rejects.toThrow(/could not start a session/);
    }
    expect(readdirSync(base)).toEqual([]);
  });

  it("sweeps a killed worker's directories (its process gone) when a directory is next made; keeps live workers' and other hosts'", async () => {
    mkdirSync(base, { recursive: true });
    const dead = join(base, `server-${HOST}-${deadPid()}-abcDEF`);
    mkdirSync(join(dead, 'state'), { recursive: true });
    writeFileSync(join(dead, 'state', 'db'), 'x');
    const live = join(base, `server-${HOST}-${process.ppid}-ghiJKL`);
    const elsewhere = join(base, `server-other.host-${deadPid()}-mnoPQR`);
    mkdirSync(live);
    mkdirSync(elsewhere);
    const mine = await makeScratch(base);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(elsewhere)).toBe(true);
    expect(mine).toMatch(new RegExp(`server-${HOST.replace(/\./g, '\\.')}-${process.pid}-[A-Za-z0-9]{6}$`));
    // This process's own are never swept (its sessions are live).
    expect(await sweepScratch(base)).toBe(0);
    expect(existsSync(mine)).toBe(true);
  });
});

test('a stdio server gets none of the worker\'s secrets: only the minimal environment and the env its config sets', async () => {
  const saved = { ...process.env };
  Object.assign(process.env, { ANTHROPIC_API_KEY: 'sk-ant-worker', OPENAI_API_KEY: 'sk-worker', FORKFLOW_ENCRYPTION_KEY_FILE: '/keys.json' });
  try {
    const printEnv = { command: process.execPath, args: ['-e', 'console.error("env=" + Object.keys(process.env).sort().join(",")); process.exit(3)'], env: { DOCS_ROOT: '/srv' } };
    const err = await connectMcp(printEnv, { scratchBase: join(mkdtempSync(join(tmpdir(), 'forkflow-mcp-state-')), 'mcp-servers'), timeoutMs: 10_000 }).catch((e: unknown) => e as Error);
    const names = /env=(\S*)/.exec((err as Error).message)?.[1]?.split(',') ?? [];
    expect(names).toContain('DOCS_ROOT');
    expect(names.filter((n) => /KEY|TOKEN|SECRET/.test(n))).toEqual([]);
  } finally {
    process.env = saved;
  }
});
