/**
 * The Message Batches routes (`/v1/messages/batches`: create, list, retrieve, cancel,
 * results as JSONL): parses the path and hands the work to the batch store (../batches.ts).
 */
import type { BatchStore } from '../batches';
import { ApiError } from '../errors';
import type { PlannedReply } from '../reply';
import type { ApiVersion } from './validation';

const ROOT = '/v1/messages/batches';

/** A batches request's operation, or undefined when the path and method are not one. */
export type BatchOp =
  | { op: 'create' }
  | { op: 'list' }
  | { op: 'retrieve'; id: string }
  | { op: 'cancel'; id: string }
  | { op: 'results'; id: string };

export function batchOpOf(method: string, path: string): BatchOp | undefined {
  if (path === ROOT) return method === 'POST' ? { op: 'create' } : method === 'GET' ? { op: 'list' } : undefined;
  if (!path.startsWith(`${ROOT}/`)) return undefined;
  const [id, action, ...rest] = path.slice(ROOT.length + 1).split('/');
  if (!id || rest.length > 0) return undefined;
  if (action === undefined && method === 'GET') return { op: 'retrieve', id };
  if (action === 'cancel' && method === 'POST') return { op: 'cancel', id };
  if (action === 'results' && method === 'GET') return { op: 'results', id };
  return undefined;
}

const json = (body: unknown): PlannedReply => ({ reply: { kind: 'json', body }, delayMs: 0 });

/** Plans a batches reply; `origin` (e.g. `http://127.0.0.1:1234`) makes `results_url` absolute. */
export function planBatches(op: BatchOp, store: BatchStore, input: { body: unknown; query: URLSearchParams; version: ApiVersion; betas: readonly string[]; origin: string }): PlannedReply {
  const absolute = (batch: unknown): unknown => {
    const b = batch as { results_url: string | null };
    return b.results_url ? { ...b, results_url: `${input.origin}${b.results_url}` } : b;
  };
  switch (op.op) {
    case 'create':
      return json(absolute(store.create(input.body, input.version, input.betas)));
    case 'list': {
      const page = store.list(input.query) as { data: unknown[] };
      return json({ ...page, data: page.data.map(absolute) });
    }
    case 'retrieve':
      return json(absolute(store.retrieve(op.id)));
    case 'cancel':
      return json(absolute(store.cancel(op.id)));
    case 'results':
      return { reply: { kind: 'text', body: store.results(op.id), contentType: 'application/binary' }, delayMs: 0 };
    default:
      throw new ApiError(404, 'Unknown batches operation.');
  }
}
