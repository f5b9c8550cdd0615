/**
 * A sandboxed command cannot take its worker down (issue 42, finding 2). Two real worker
 * processes serve one queue; a fork allowed one local host runs, call by call, everything a
 * command can do to the worker's side of the sandbox: HTTPS and HTTP requests the proxy
 * refuses, malformed and oversized proxy requests, tunnels and forwarded requests closed
 * midway, an upstream that resets, output floods, signals, a command that kills its own
 * process group or everything it can see. After each call both workers are still alive,
 * the tool returned a result to the model, and the fork completed. On the old code the
 * first refused HTTPS request killed the worker running it, and the retry killed the next.
 */
import { chmodSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { ForkflowClient } from '../../src/client';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { startWorkerProcess, type WorkerProcess } from '../kit/processes';
import { script, toolResultsIn, toolStep } from '../kit/tree';

jest.setTimeout(600_000);

let h: Harness;
let queue: string;
let forkflow: ForkflowClient;
let workers: WorkerProcess[] = [];
let upstream: Server;
let resetter: TcpServer;
let port: number;
let resetPort: number;
let workerOpts: Parameters<typeof startWorkerProcess>[0];

beforeAll(async () => {
  h = await startHarness({ name: 'sandbox-survival', noWorker: true });
  queue = uniqueTaskQueue('sandbox-survival');
  forkflow = new ForkflowClient(h.client, { taskQueue: queue });
  // The upstream the fork may reach: answers at once, or streams slowly (to be cut midway).
  upstream = createHttpServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/cut')) {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100000' });
      res.write('partial');
      setImmediate(() => res.socket?.destroy());
      return;
    }
    if (req.url?.startsWith('/slow')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'.repeat(1024)), 20);
      res.once('close', () => clearInterval(timer));
      return;
    }
    res.end(`hello ${req.url}\n`);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  port = (upstream.address() as { port: number }).port;
  // An upstream that resets every connection it accepts.
  resetter = createTcpServer((c) => c.resetAndDestroy());
  await new Promise<void>((resolve) => resetter.listen(0, '127.0.0.1', resolve));
  resetPort = (resetter.address() as { port: number }).port;
  const workspace = tempDir('survival');
  // A root worker without a pids cgroup runs read-only calls as nobody, who must enter it.
  chmodSync(workspace, 0o755);
  workerOpts = { address: h.env.address, taskQueue: queue, modelUrl: h.model.url, workspace, bundlePath: h.env.bundlePath };
  workers = await Promise.all([startWorkerProcess(workerOpts), startWorkerProcess(workerOpts)]);
});

// Each attack is judged on its own: a worker an earlier one killed is replaced.
afterEach(async () => {
  const dead = (w: WorkerProcess) => w.child.exitCode !== null || w.child.signalCode !== null;
  const lost = workers.filter(dead).length;
  workers = [...workers.filter((w) => !dead(w)), ...(await Promise.all(Array.from({ length: lost }, () => startWorkerProcess(workerOpts))))];
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  await new Promise<void>((resolve) => resetter.close(() => resolve()));
  await h.close();
});

/** Resolves with the worker that exits first (never, when both stay up). */
function anyExit(): { promise: Promise<WorkerProcess>; stop: () => void } {
  const listeners: [WorkerProcess, () => void][] = [];
  const promise = new Promise<WorkerProcess>((resolve) => {
    for (const w of workers) {
      if (w.child.exitCode !== null || w.child.signalCode !== null) resolve(w);
      const onExit = () => resolve(w);
      w.child.once('exit', onExit);
      listeners.push([w, onExit]);
    }
  });
  return { promise, stop: () => listeners.forEach(([w, l]) => w.child.off('exit', l)) };
}

/** Raw bytes sent to the sandbox's proxy bridge, its answer printed (bash's /dev/tcp). */
const raw = (bytes: string) => `exec 3<>/dev/tcp/127.0.0.1/3128 && printf '${bytes}' >&3 && timeout 5 cat <&3; exec 3<&-; echo`;

/** Each attack: its name, its command (given the ports, known once the servers listen), what its result shows. */
const attacks: [string, () => string, RegExp][] = [
  ['an HTTPS request to a host not allowed (CONNECT refused)', () => 'curl -sS https://not-listed.invalid/; echo "curl $?"', /proxy refused 1 request/],
  ['a plain HTTP request to a host not allowed', () => 'curl -sS http://not-listed.invalid/; echo "curl $?"', /forkflow proxy: refused/],
  ['many refused requests at once, HTTP and HTTPS', () => 'for i in $(seq 1 30); do curl -s -o /dev/null https://no$i.invalid/ & curl -s -o /dev/null http://no$i.invalid/ & done; wait; echo all', /proxy refused 50 request/],
  ['a CONNECT without a port and one to a bracketed mess', () => raw('CONNECT nohost HTTP/1.1\\r\\n\\r\\nCONNECT [::1 HTTP/1.1\\r\\n\\r\\n'), /403 Forbidden/],
  ['garbage that is not HTTP', () => raw('\\x00\\x01GARBAGE \\xff\\xfe\\r\\n\\r\\n'), /400 Bad Request/],
  ['a relative request and one with credentials in the URL', () => raw(`GET /relative HTTP/1.1\\r\\nHost: x\\r\\n\\r\\nGET http://u:p@localhost:${port}/ HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n`), /400 Bad Request[\s\S]*400 Bad Request/],
  ['headers too large for the parser', () => `head -c 70000 /dev/zero | tr '\\0' a > /tmp/h; exec 3<>/dev/tcp/127.0.0.1/3128; { printf 'GET http://localhost:${port}/ HTTP/1.1\\r\\nX-Big: '; cat /tmp/h; printf '\\r\\n\\r\\n'; } >&3; timeout 5 cat <&3`, /431 Request Header Fields Too Large|Connection reset by peer/],
  ['a broken chunked body', () => raw(`POST http://localhost:${port}/ HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\nnope\\r\\n`), /400 Bad Request/],
  ['a tunnel closed midway through a slow answer', () => `curl -sS -p --max-time 1 -o /dev/null http://localhost:${port}/slow; echo "curl $?"`, /curl 28/],
  ['a forwarded request closed midway through a slow answer', () => `curl -sS --max-time 1 -o /dev/null http://localhost:${port}/slow; echo "curl $?"`, /curl 28/],
  ['an upload cut off midway', () => `head -c 50000000 /dev/zero | curl -sS --max-time 1 -T - http://localhost:${port}/upload; echo "curl $?"`, /curl 28/],
  ['an upstream that dies midway through its answer', () => `curl -sS http://localhost:${port}/cut; echo "curl $?"; curl -sS -p http://localhost:${port}/cut; echo "curl $?"`, /curl 18/],
  ['a tunnel to an upstream that resets', () => `curl -sS -p http://localhost:${resetPort}/; echo "curl $?"; curl -sS http://localhost:${resetPort}/; echo "curl $?"`, /curl (52|56)\n[\s\S]*ECONNRESET/],
  ['the bridge killed under an open tunnel', () => `(curl -sS -p --max-time 5 -o /dev/null http://localhost:${port}/slow &) ; sleep 0.3; pkill -9 -f net.createServer; wait; echo killed`, /killed/],
  ['an output flood', () => 'yes flood', /Output passed/],
  ['an output flood on stderr, with a tunnel open', () => `(curl -sS -p -o /dev/null --max-time 30 http://localhost:${port}/slow &); yes err >&2`, /Output passed/],
  ['a command that kills its own process group', () => 'sleep 30 & kill -9 0', /killed by SIGKILL|exit code/],
  ['a command that kills everything it can see', () => 'kill -9 -1; echo survived', /survived|killed by SIGKILL/],
  ['a command that signals itself', () => "sh -c 'kill -SEGV $$'; echo \"sh $?\"", /sh 139/],
  ['a command that ignores SIGTERM and outlives its time limit', () => "trap '' TERM; sleep 30 & sleep 30; echo never", /timed out after 4000 ms/],
];

describe('a sandboxed command cannot take its worker down', () => {
  test.each(attacks)('%s: both workers live on, the tool returns a result', async (name, commandOf, expected) => {
    const command = commandOf();
    const agentId = `survive-${attacks.findIndex(([n]) => n === name)}`;
    const handle = await forkflow.start({
      agentId,
      prompt: script('Attack.', toolStep('Bash', { command, timeout_ms: 4000 }), '@reply survived'),
      sandbox: { network: { allowedHosts: [`localhost:${port}`, `localhost:${resetPort}`] } },
    });
    const exit = anyExit();
    try {
      const outcome = await Promise.race([handle.result().then((r) => ({ result: r })), exit.promise.then((w) => ({ died: w.output().slice(-2000) }))]);
      if ('died' in outcome) await h.client.workflow.getHandle(handle.workflowId).terminate('a worker died');
      expect(outcome).toMatchObject({ result: { status: 'completed', text: 'survived' } });
    } finally {
      exit.stop();
    }
    const results = toolResultsIn(await forkflow.transcript(agentId));
    expect(results).toHaveLength(1);
    expect(results[0]!.text).toMatch(expected);
    for (const w of workers) expect({ pid: w.child.pid, exitCode: w.child.exitCode, signal: w.child.signalCode }).toEqual({ pid: w.child.pid, exitCode: null, signal: null });
  });
});
