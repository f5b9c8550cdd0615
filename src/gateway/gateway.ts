/**
 * The model gateway: an HTTP hop between workers and the provider that outlives them. A
 * model call carrying a call key (`forkflow-call-key`, the same on every attempt of one
 * call) is finished upstream even when the worker that made it dies mid-stream, and its
 * response is kept; the retry, on whichever worker, gets that response replayed byte for
 * byte (or waits for it while it is still arriving) instead of a second provider call.
 * A worker's response store (src/activities/model/response-store.ts) covers a response
 * that reached the worker; the gateway covers the one that had not yet: cut short by the
 * kill, or written by the provider but still in the dead worker's socket. One gateway fronts
 * every provider of a worker: the default upstream on its root path, named providers
 * (OpenAI-compatible ones among them) under `/forkflow/v1/providers/<name>/` (upstreams.ts).
 *
 * Everything else passes through untouched. A call cancelled on purpose is stopped
 * upstream (`DELETE /forkflow/v1/calls/<key>`), when the cancel carries the proof
 * (`forkflow-call-proof`) of an attempt that made or joined that call: the key is derived from
 * ids that anyone who reads the workflow's history knows, the proof only that attempt's
 * worker. Errors are never kept: a retry of a failed call asks the provider again, as it
 * would without the gateway.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, createServer, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { CALL_KEY_HEADER, CALL_PROOF_HEADER, CANCEL_PATH_PREFIX, PROVIDER_URL_HEADER, REPLAYED_HEADER, callKeySchema, callProofSchema } from '../shared/providers/model-gateway';
import { CallStore, type StoredCall } from './call-store';
import type { PrivateStore } from '../shared/wire/private-store';
import { Upstreams, type Routed } from './upstreams';
import { isWholeResponse } from './whole-response';

export { isWholeResponse } from './whole-response';

/** The provider refuses bodies over 32 MB; a little headroom for what is not ours to judge. */
const MAX_BODY_BYTES = 40 * 1024 * 1024;

/** Headers that describe one hop, not the message: never forwarded in either direction. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length', 'accept-encoding', 'content-encoding', CALL_KEY_HEADER, CALL_PROOF_HEADER, PROVIDER_URL_HEADER]);

export interface GatewayOptions {
  /** The provider's base URL, e.g. https://api.anthropic.com (a path prefix is kept). */
  upstream: string;
  /**
   * Named providers, name → base URL (e.g. `{ openai: 'https://api.openai.com/v1' }`), served
   * under `/forkflow/v1/providers/<name>/` (src/gateway/upstreams.ts): their keyed calls are
   * finished and replayed like the default upstream's.
   */
  providers?: Readonly<Record<string, string>>;
  /** Where finished calls are kept until their retry (or their age limit): a private directory (call-store.ts), or one opened with a sealer. */
  dir: string | PrivateStore;
  /** Interface to listen on. Default 127.0.0.1: the gateway forwards whatever key a caller sends. */
  host?: string;
  /** Default 0 (ephemeral; read `url`). */
  port?: number;
  /** Finished calls older than this are dropped (default one day; swept at start and hourly). */
  maxAgeMs?: number;
}

/** What the gateway did, per kind: for the CLI's summary, metrics and tests. */
export interface GatewayCounts {
  /** Keyed calls sent upstream. */
  forwarded: number;
  /** Keyed calls answered from a kept response. */
  replayed: number;
  /** Keyed calls that found their call still running upstream and waited for it. */
  attached: number;
  /** Keyed calls whose caller went away and that the gateway finished anyway. */
  finishedForNobody: number;
  /** Calls stopped upstream on a caller's cancel. */
  cancelled: number;
  /** Cancels of a running call whose proof was not one of that call's attempts': nothing stopped. */
  cancelsRefused: number;
  /** Requests without a key, passed through. */
  passedThrough: number;
}

interface RunningCall {
  requestSha256: string;
  /** sha256 of the proofs of the attempts that made or joined it: their cancel stops it. */
  proofs: Set<string>;
  /** Settles when the upstream exchange is over (kept or not). */
  done: Promise<void>;
  stop: () => void;
}

const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) out[k] = v;
  return out;
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(forwardable(headers))) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** An error in the provider's own shape, so the SDK reports it like any other. */
function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent || res.destroyed) return void res.destroy();
  const body = JSON.stringify({ type: 'error', error: { type, message: `forkflow gateway: ${message}` } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.once('end', () => resolve(size > MAX_BODY_BYTES ? 'too large' : Buffer.concat(chunks)));
    req.once('error', reject);
    // A caller that dies mid-upload never sends its end: nothing was asked, nothing to finish.
    req.once('close', () => !req.complete && reject(new Error('the caller hung up before its request was complete')));
  });
}

export class ModelGateway {
  readonly counts: GatewayCounts = { forwarded: 0, replayed: 0, attached: 0, finishedForNobody: 0, cancelled: 0, cancelsRefused: 0, passedThrough: 0 };
  private readonly store: CallStore;
  private readonly running = new Map<string, RunningCall>();
  private readonly sockets = new Set<Socket>();
  private readonly upstreams: Upstreams;
  private readonly sweeper: NodeJS.Timeout;
  private server?: Server;
  url = '';

  private constructor(private readonly opts: GatewayOptions) {
    this.upstreams = new Upstreams(opts.upstream, opts.providers);
    const maxAgeMs = opts.maxAgeMs ?? 24 * 3_600_000;
    this.store = new CallStore(opts.dir, maxAgeMs);
    this.store.sweep();
    this.sweeper = setInterval(() => this.store.sweep(), Math.min(maxAgeMs, 3_600_000)).unref();
  }

  static async start(opts: GatewayOptions): Promise<ModelGateway> {
    const gateway = new ModelGateway(opts);
    await gateway.listen(opts.host ?? '127.0.0.1', opts.port ?? 0);
    return gateway;
  }

  private listen(host: string, port: number): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => sendError(res, 500, 'api_error', `internal error: ${String(err)}`));
    });
    // Provider calls can be silent for minutes (time to first token of a huge prompt).
    server.requestTimeout = 0;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        const { port: bound } = server.address() as AddressInfo;
        this.url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
        resolve();
      });
    });
  }

  /** Stops listening and drops connections; calls still running upstream are stopped. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const call of this.running.values()) call.stop();
    for (const socket of this.sockets) socket.destroy();
    this.upstreams.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body === 'too large') return sendError(res, 413, 'request_too_large', `request body over ${MAX_BODY_BYTES} bytes`);
    const path = req.url ?? '/';
    if (req.method === 'DELETE' && path.startsWith(CANCEL_PATH_PREFIX)) return this.cancel(path.slice(CANCEL_PATH_PREFIX.length), req.headers[CALL_PROOF_HEADER], res);
    const expected = req.headers[PROVIDER_URL_HEADER];
    const target = this.upstreams.route(path, Array.isArray(expected) ? expected[0] : expected);
    if ('status' in target) return sendError(res, target.status, target.type, target.message);
    const rawKey = req.headers[CALL_KEY_HEADER];
    if (rawKey === undefined) {
      this.counts.passedThrough++;
      return void this.forward(req, target, body, res, undefined);
    }
    const key = callKeySchema.safeParse(rawKey);
    if (!key.success || req.method !== 'POST') return sendError(res, 400, 'invalid_request_error', `bad ${CALL_KEY_HEADER} (a POST with 64 lowercase hex digits)`);
    const rawProof = req.headers[CALL_PROOF_HEADER];
    const proof = rawProof === undefined ? undefined : callProofSchema.safeParse(rawProof);
    if (proof && !proof.success) return sendError(res, 400, 'invalid_request_error', `bad ${CALL_PROOF_HEADER} (64 lowercase hex digits)`);
    const proofDigest = proof?.success ? sha256Hex(proof.data) : undefined;
    const requestSha256 = createHash('sha256').update(body).digest('hex');
    let running = this.running.get(key.data);
    if (running && running.requestSha256 === requestSha256) {
      // The caller's earlier attempt is still streaming upstream: wait for it, then replay. This
      // attempt joins the call, so its cancel (its worker knows its own proof) stops it too.
      this.counts.attached++;
      if (proofDigest) running.proofs.add(proofDigest);
      await running.done;
    }
    const kept = await this.store.get(key.data, requestSha256);
    if (kept) {
      this.counts.replayed++;
      return this.replay(kept, res);
    }
    running = this.running.get(key.data);
    // Someone else's attempt under this key with another body: let it finish for its own caller.
    if (running) await running.done;
    this.counts.forwarded++;
    return void this.forward(req, target, body, res, { key: key.data, requestSha256, proofs: new Set(proofDigest ? [proofDigest] : []) });
  }

  /**
   * Stops a running call for a caller that proves it made or joined it. Without a proof: 401.
   * With one that is not this call's (or no call runs under the key): 204 and nothing stopped,
   * so a stranger learns nothing of which calls run.
   */
  private cancel(rawKey: string, rawProof: string | string[] | undefined, res: ServerResponse): void {
    const key = callKeySchema.safeParse(rawKey);
    if (!key.success) return sendError(res, 400, 'invalid_request_error', 'bad call key in the cancel path');
    const proof = callProofSchema.safeParse(rawProof);
    if (!proof.success) return sendError(res, 401, 'authentication_error', `a cancel needs the call's proof (${CALL_PROOF_HEADER}: 64 lowercase hex digits)`);
    const running = this.running.get(key.data);
    if (running) {
      const given = Buffer.from(sha256Hex(proof.data), 'hex');
      if ([...running.proofs].some((p) => timingSafeEqual(Buffer.from(p, 'hex'), given))) {
        this.counts.cancelled++;
        running.stop();
      } else this.counts.cancelsRefused++;
    }
    res.writeHead(204).end();
  }

  private replay(kept: StoredCall, res: ServerResponse): void {
    if (res.destroyed || res.socket?.destroyed) return;
    res.writeHead(kept.status, { ...kept.headers, [REPLAYED_HEADER]: '1', 'content-length': kept.body.length });
    res.end(kept.body);
  }

  /**
   * Sends the request upstream and streams the answer to the caller as it arrives. A keyed
   * call is seen through to its end even if the caller goes away, and kept when it is whole.
   */
  private forward(req: IncomingMessage, target: Exclude<Routed, { status: number }>, body: Buffer, res: ServerResponse, keyed: { key: string; requestSha256: string; proofs: Set<string> } | undefined): Promise<void> {
    const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const upstreamReq = send(target.url, {
      method: req.method,
      agent: target.agent,
      headers: { ...forwardable(req.headers), 'accept-encoding': 'identity', ...(body.length > 0 ? { 'content-length': String(body.length) } : {}) },
    });
    let stopped = false;
    // The caller hung up (its worker died, or it gave up): nothing more is written to it.
    let callerGone = false;
    res.once('close', () => (callerGone = !res.writableFinished));
    res.on('error', () => undefined);
    const stop = () => {
      stopped = true;
      upstreamReq.destroy();
    };
    if (keyed) this.running.set(keyed.key, { requestSha256: keyed.requestSha256, proofs: keyed.proofs, done, stop });
    const finish = () => {
      if (keyed && this.running.get(keyed.key)?.done === done) this.running.delete(keyed.key);
      settle();
    };
    // Without a key, a caller that leaves takes the upstream call with it, as without a gateway.
    if (!keyed) res.once('close', () => callerGone && upstreamReq.destroy());
    upstreamReq.once('error', (err) => {
      if (!stopped && !callerGone) sendError(res, 502, 'api_error', `upstream unreachable: ${err.message}`);
      else res.destroy();
      finish();
    });
    upstreamReq.once('response', (upstreamRes) => {
      const status = upstreamRes.statusCode ?? 502;
      const headers = flatHeaders(upstreamRes.headers);
      if (!callerGone) res.writeHead(status, headers);
      const chunks: Buffer[] = [];
      upstreamRes.on('data', (chunk: Buffer) => {
        if (keyed) chunks.push(chunk);
        // A caller that died is not waited for: the call goes on to its end regardless.
        if (!callerGone) res.write(chunk);
      });
      upstreamRes.once('error', () => undefined);
      upstreamRes.once('close', () => {
        const whole = upstreamRes.complete && !stopped;
        const bytes = keyed && whole ? Buffer.concat(chunks) : undefined;
        // Kept before the call counts as done: a retry waiting for it reads the entry next.
        const keeping = keyed && bytes && isWholeResponse(status, headers['content-type'] ?? '', bytes)
          ? this.store.put(keyed.key, keyed.requestSha256, { status, headers, body: bytes }).then(
              () => void (callerGone && this.counts.finishedForNobody++),
              () => undefined, // An unwritable store costs a possible second call, never this one's answer.
            )
          : Promise.resolve();
        void keeping.then(() => {
          if (callerGone) {
            // Nobody to tell.
          } else if (whole) res.end();
          else res.destroy();
          finish();
        });
      });
    });
    upstreamReq.end(body.length > 0 ? body : undefined);
    return done;
  }
}
