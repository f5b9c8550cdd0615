/**
 * Network for sandboxed Bash through the worker's filtering proxy (sandbox/net-proxy.ts and
 * net-bridge.ts), with real bubblewrap: a fork that allows a host reaches it over HTTP (and
 * through a CONNECT tunnel) from curl and from node inside the sandbox; a host it does not
 * list gets 403 and the server sees nothing; raw TCP stays impossible; the proxy's socket
 * directory is private and gone after the call. The classifier is told to allow everything,
 * so only the sandbox and the proxy stand in the way.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { probeSandbox, startNetProxy, type Refusal, type SandboxAvailability, type ShellSandboxContext } from '../../../src/activities/tools/sandbox';
import type { ShellClassifier, ToolContext, WritePolicy } from '../../../src/activities/tools/types';
import { context, run } from './kit';
import { realSandbox } from '../../kit/bubblewrap';
import { folderNobodyCanEnter } from '../../kit/reachable';

const REPO = path.resolve(__dirname, '..', '..', '..');
const allowAll: ShellClassifier = () => Promise.resolve({ readOnly: true });
const NONE: WritePolicy = { kind: 'none' };
const WORKSPACE: WritePolicy = { kind: 'workspace' };

let available: SandboxAvailability;
let ws: string;
let server: Server;
let port: number;
let seen: string[];
let connections: number;

beforeAll(async () => {
  available = await realSandbox();
}, 300_000);

beforeEach(async () => {
  mkdirSync(path.join(REPO, '.scratch'), { recursive: true });
  ws = realpathSync(mkdtempSync(path.join(REPO, '.scratch', 'net-')));
  seen = [];
  connections = 0;
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
    res.end(`hello from ${req.url}\n`);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(ws, { recursive: true, force: true });
});

function ctx(policy: WritePolicy, sandbox: Partial<ShellSandboxContext>): ToolContext {
  return context(ws, { writePolicy: policy, classifyShell: allowAll, shellSandbox: { availability: available, require: false, ...sandbox } });
}

/** The proxy directories of this process that exist now. */
const proxyDirs = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith('forkflow-net-'));

describe('a fork that allows named hosts', () => {
  it.each([['read-only', NONE], ['writing', WORKSPACE]] as const)('%s: reaches an allowed host through the proxy, from curl (plain and CONNECT) and node', async (_name, policy) => {
    const before = proxyDirs();
    const node = `node -e "const u=new URL(process.env.HTTP_PROXY);require('http').get({host:u.hostname,port:u.port,path:'http://localhost:${port}/node'},r=>r.pipe(process.stdout))"`;
    const command = [`curl -sS http://localhost:${port}/plain`, `curl -sS -p http://localhost:${port}/tunnel`, node].join(' && ');
    const out = await run('Bash', { command }, ctx(policy, { network: { allowedHosts: [`localhost:${port}`] } }));
    expect(out.content).toContain('hello from /plain');
    expect(out.content).toContain('hello from /tunnel');
    expect(out.content).toContain('hello from /node');
    expect(out.isError).toBe(false);
    expect(out.content).not.toContain('Background processes');
    expect(seen).toEqual([`GET /plain host=localhost:${port}`, `GET /tunnel host=localhost:${port}`, `GET /node host=localhost:${port}`]);
    // The call's private proxy directory is gone with it.
    expect(proxyDirs()).toEqual(before);
  });

  it('works as user nobody too (a root worker without a pids cgroup): the socket directory is given to nobody', async () => {
    if (process.getuid?.() !== 0) return expect(available.available).toBe(true);
    const noCgroup = await probeSandbox({ ...process.env, FORKFLOW_SANDBOX: '', FORKFLOW_SANDBOX_CGROUP: 'off' });
    expect(noCgroup).toMatchObject({ available: true, processCap: { kind: 'unprivileged-user' } });
    // nobody must be able to enter the workspace: not so under .scratch/ when the clone's parent is private.
    rmSync(ws, { recursive: true, force: true });
    ws = folderNobodyCanEnter('net-nobody-');
    const out = await run('Bash', { command: `id -u && curl -sS http://localhost:${port}/as-nobody` }, ctx(NONE, { availability: noCgroup, network: { allowedHosts: [`localhost:${port}`] } }));
    expect(out.content.split('\n')[0]).toBe('65534');
    expect(out.content).toContain('hello from /as-nobody');
    expect(seen).toEqual([`GET /as-nobody host=localhost:${port}`]);
  });

  it('gets 403 for anything else, and the server sees nothing', async () => {
    const refused: Refusal[] = [];
    const code = (args: string) => `curl -s -o /dev/null -w '%{http_code}\\n' ${args}`;
    const command = [
      code(`http://localhost:${port + 1 === 65536 ? 1 : port + 1}/other-port`),
      code(`http://127.0.0.1:${port}/ip-literal`),
      code(`-p http://127.0.0.1:${port}/ip-tunnel`),
      code('http://169.254.169.254/latest/meta-data/'),
      code('http://not-listed.invalid/'),
    ].join('; ');
    const out = await run('Bash', { command }, ctx(NONE, { network: { allowedHosts: [`localhost:${port}`] }, onNetworkRefused: (r) => refused.push(r) }));
    const codes = out.content.split('\n').slice(0, 5);
    // curl reports a refused CONNECT as 000 with the 403 in its error; plain requests show 403.
    expect(codes).toEqual(['403', '403', '000', '403', '403']);
    expect(refused.map((r) => r.target)).toEqual([`localhost:${port + 1 === 65536 ? 1 : port + 1}`, `127.0.0.1:${port}`, `127.0.0.1:${port}`, '169.254.169.254:80', 'not-listed.invalid:80']);
    expect(out.content).toContain("[Network: the sandbox's proxy refused 5 request(s)");
    expect(seen).toEqual([]);
    expect(connections).toBe(0);
  });

  it('still has no raw TCP: the worker’s loopback is out of reach, only the bridge listens inside', async () => {
    const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`;
    const out = await run('Bash', { command }, ctx(WORKSPACE, { network: { allowedHosts: [`localhost:${port}`] } }));
    expect(out.content).not.toContain('connected');
    expect(out.isError).toBe(true);
    expect(connections).toBe(0);
  });
});

it('keeps its socket in a fresh private directory and removes it on close', async () => {
  const proxy = await startNetProxy({ allowance: { allowedHosts: ['example.com'] } });
  expect(statSync(proxy.dir).mode & 0o777).toBe(0o700);
  expect(statSync(path.join(proxy.dir, proxy.socket)).isSocket()).toBe(true);
  await proxy.close();
  expect(() => statSync(proxy.dir)).toThrow();
});
