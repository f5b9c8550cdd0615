/**
 * MCP servers for the tests: the two reference servers installed from npm and not written
 * here — `@modelcontextprotocol/server-filesystem` over stdio, `@modelcontextprotocol/
 * server-everything` over streamable HTTP (a process of its own on a free port) — and the
 * hostile (and the screenshot) ones in this folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { OperatorConsent } from '../../../src/activities/consent';
import type { McpServers } from '../../../src/shared/tools/mcp';
import { parseMcpCommandRule } from '../../../src/worker/consent';

const root = join(__dirname, '..', '..', '..');
const pkg = (name: string) => join(root, 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js');
const tsx = require.resolve('tsx/cjs');

/** server-filesystem over stdio, confined to `dir`. */
export function filesystemServer(dir: string, extra: Partial<McpServers[string]> = {}): McpServers[string] {
  return { command: process.execPath, args: [pkg('server-filesystem'), dir], ...extra } as McpServers[string];
}

/** server-everything over stdio (its long-running operation sends progress). */
export function everythingStdio(extra: Partial<McpServers[string]> = {}): McpServers[string] {
  return { command: process.execPath, args: [pkg('server-everything'), 'stdio'], ...extra } as McpServers[string];
}

/** One of the hostile servers of this folder, over stdio. */
export function hostileServer(file: 'many-tools-server' | 'malformed-server' | 'screenshot-server', args: string[] = [], extra: Partial<McpServers[string]> = {}): McpServers[string] {
  return { command: process.execPath, args: ['-r', tsx, join(__dirname, `${file}.ts`), ...args], ...extra } as McpServers[string];
}

/**
 * The worker's consent rules for the servers above (a worker starts a stdio MCP command only
 * when its operator allows it: src/worker/consent.ts), in the operator's own syntax.
 */
export function testServerRules(): string[] {
  const node = process.execPath;
  return [
    `${node} ${pkg('server-filesystem')} *`,
    `${node} ${pkg('server-everything')} stdio`,
    `${node} -r ${tsx} ${join(__dirname, 'many-tools-server.ts')} ...`,
    `${node} -r ${tsx} ${join(__dirname, 'malformed-server.ts')} ...`,
    `${node} -r ${tsx} ${join(__dirname, 'screenshot-server.ts')} ...`,
  ];
}

/** A consent that allows the test servers (and `extra` rules). */
export function testServersConsent(extra: string[] = []): OperatorConsent {
  return { mcpCommands: [...testServerRules(), ...extra].map(parseMcpCommandRule), allowBypassPermissions: false };
}

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  s.close();
  await once(s, 'close');
  return port;
}

export interface HttpMcpServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything over streamable HTTP, in a process of its own; resolves once it listens. */
export async function startEverythingHttp(): Promise<HttpMcpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [pkg('server-everything'), 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('listening on port')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited early (${code}): ${out}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
