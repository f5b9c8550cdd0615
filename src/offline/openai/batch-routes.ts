/**
 * The OpenAI Batch API routes of the offline model: `/v1/files` (upload, retrieve, content,
 * delete) and `/v1/batches` (create, list, retrieve, cancel). Parses the path and hands the
 * work to the store (batches.ts); an upload's multipart body arrives parsed (`form`).
 */
import { ApiError, invalidRequest } from '../errors';
import type { PlannedReply } from '../reply';
import type { ChatBatchStore } from './batches';

/** An OpenAI batch or file request's operation, or undefined when the path and method are not one. */
export type ChatBatchOp =
  | { op: 'file-upload' }
  | { op: 'file-retrieve'; id: string }
  | { op: 'file-content'; id: string }
  | { op: 'file-delete'; id: string }
  | { op: 'batch-create' }
  | { op: 'batch-list' }
  | { op: 'batch-retrieve'; id: string }
  | { op: 'batch-cancel'; id: string };

/** An uploaded file as the multipart body carried it. */
export interface UploadForm {
  filename: string;
  content: string;
  purpose: string | undefined;
}

export function chatBatchOpOf(method: string, path: string): ChatBatchOp | undefined {
  const [, v1, root, id, action, ...rest] = path.split('/');
  if (v1 !== 'v1' || rest.length > 0) return undefined;
  if (root === 'files') {
    if (id === undefined) return method === 'POST' ? { op: 'file-upload' } : undefined;
    if (action === undefined) return method === 'GET' ? { op: 'file-retrieve', id } : method === 'DELETE' ? { op: 'file-delete', id } : undefined;
    return action === 'content' && method === 'GET' ? { op: 'file-content', id } : undefined;
  }
  if (root === 'batches') {
    if (id === undefined) return method === 'POST' ? { op: 'batch-create' } : method === 'GET' ? { op: 'batch-list' } : undefined;
    if (action === undefined) return method === 'GET' ? { op: 'batch-retrieve', id } : undefined;
    return action === 'cancel' && method === 'POST' ? { op: 'batch-cancel', id } : undefined;
  }
  return undefined;
}

/** The multipart body of an upload: its `file` part and its `purpose`. */
export async function readUploadForm(raw: Buffer, contentType: string | undefined): Promise<UploadForm> {
  if (!contentType?.startsWith('multipart/form-data')) throw invalidRequest('An upload is multipart/form-data with a file and a purpose.');
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
  } catch (e) {
    throw invalidRequest(`The multipart body cannot be read: ${(e as Error).message}`);
  }
  const file = form.get('file');
  if (!(file instanceof Blob)) throw invalidRequest('file: required (the uploaded file)');
  const purpose = form.get('purpose');
  return { filename: (file as File).name || 'upload', content: await file.text(), purpose: typeof purpose === 'string' ? purpose : undefined };
}

const json = (body: unknown): PlannedReply => ({ reply: { kind: 'json', body }, delayMs: 0 });

export function planChatBatches(op: ChatBatchOp, store: ChatBatchStore, input: { body: unknown; jsonError?: string; query: URLSearchParams; form?: UploadForm }): PlannedReply {
  if (op.op === 'file-upload') {
    if (!input.form) throw invalidRequest('An upload is multipart/form-data with a file and a purpose.');
    return json(store.uploadFile(input.form));
  }
  if (op.op === 'batch-create' && input.jsonError !== undefined) throw invalidRequest(`Request body is not valid JSON: ${input.jsonError}`);
  switch (op.op) {
    case 'file-retrieve':
      return json(store.retrieveFile(op.id));
    case 'file-content':
      return { reply: { kind: 'text', body: store.fileContent(op.id), contentType: 'application/octet-stream' }, delayMs: 0 };
    case 'file-delete':
      return json(store.deleteFile(op.id));
    case 'batch-create':
      return json(store.create(input.body));
    case 'batch-list':
      return json(store.list(input.query));
    case 'batch-retrieve':
      return json(store.retrieve(op.id));
    case 'batch-cancel':
      return json(store.cancel(op.id));
    default:
      throw new ApiError(404, 'Unknown batch operation.');
  }
}
