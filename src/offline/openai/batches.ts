/**
 * The offline model's OpenAI Batch API: the files a batch reads and writes (`/v1/files`: a
 * JSONL upload with purpose `batch`, and the output and error files it produces) and the
 * batches (`/v1/batches` on endpoint `/v1/chat/completions`). A batch is `in_progress` from its
 * creation (`validating`, its counts zero, for its first `validatingMs`) and ends `processingMs` later on the emulated clock, processed when first looked at
 * after that: each line is answered as `POST /v1/chat/completions` would answer it (the same
 * scripts, limits and automatic prompt cache), and written to the output file (answers) or the
 * error file (refused requests, and every request of an expired or cancelled batch, with
 * `batch_expired` / `batch_cancelled`). Faults injected with `batches.inject` and the
 * accounting of `batches.entries()` are shared with the Message Batches (../batches.ts).
 */
import { z } from 'zod';
import { BATCH_EXPIRY_MS, type BatchEntry, type BatchStore } from '../batches';
import { ApiError, invalidRequest, isApiError } from '../errors';
import { sha256HexNative } from '../native-hash';
import { planMessages, type MessagesDeps } from '../routes/messages';
import type { WireMessage } from '../types';
import { toMessagesBody } from './request';
import { chatCompletion, chatErrorBody } from './response';

/** The one endpoint the offline model's batches run. */
export const CHAT_ENDPOINT = '/v1/chat/completions';

interface StoredFile {
  id: string;
  bytes: number;
  createdAt: number;
  filename: string;
  purpose: string;
  content: string;
}

type Status = 'in_progress' | 'completed' | 'failed' | 'expired' | 'cancelled';

interface ChatBatch {
  id: string;
  inputFileId: string;
  createdAt: number;
  endsAt: number;
  expire: boolean;
  erroredIds: Set<string>;
  lines: { custom_id: string; body: unknown }[];
  metadata: Record<string, string> | null;
  status: Status;
  endedAt?: number;
  outputFileId?: string;
  errorFileId?: string;
  counts: { total: number; completed: number; failed: number };
  errors?: { code: string; line: number | null; message: string; param: null }[];
}

const createSchema = z.strictObject({
  input_file_id: z.string().min(1),
  endpoint: z.string(),
  completion_window: z.literal('24h'),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullish(),
  output_expires_after: z.strictObject({ anchor: z.literal('created_at'), seconds: z.number().int().min(3600).max(2_592_000) }).optional(),
});

const inputLine = z.strictObject({ custom_id: z.string().min(1), method: z.literal('POST'), url: z.string(), body: z.record(z.string(), z.unknown()) });

const seconds = (ms: number | undefined): number | null => (ms === undefined ? null : Math.floor(ms / 1000));

export interface ChatBatchSettings {
  now: () => number;
  processingMs: number;
  /** How long a batch first reports `validating`, its counts all zero (the API's state before it has read the file). */
  validatingMs?: number;
  messages: MessagesDeps;
  /** The Message Batches store: its fault queue and accounting are shared. */
  shared: BatchStore;
}

/** Files and batches of the OpenAI wire (see the file header). */
export class ChatBatchStore {
  private readonly files = new Map<string, StoredFile>();
  private readonly batches = new Map<string, ChatBatch>();
  private seq = 0;

  constructor(private readonly settings: ChatBatchSettings) {}

  /** Ids of the batches created so far, oldest first. */
  ids(): string[] {
    return [...this.batches.keys()];
  }

  private newId(prefix: string): string {
    return `${prefix}${sha256HexNative(`${++this.seq}:${this.settings.now()}:${prefix}`).slice(0, 24)}`;
  }

  private addFile(filename: string, purpose: string, content: string): StoredFile {
    const file = { id: this.newId('file-offline'), bytes: Buffer.byteLength(content), createdAt: this.settings.now(), filename, purpose, content };
    this.files.set(file.id, file);
    return file;
  }

  uploadFile(form: { filename: string; content: string; purpose: string | undefined }): unknown {
    if (!form.purpose) throw invalidRequest("purpose: required (the Batch API's input is uploaded with purpose 'batch')");
    return this.fileView(this.addFile(form.filename, form.purpose, form.content));
  }

  private file(id: string): StoredFile {
    const file = this.files.get(id);
    if (!file) throw new ApiError(404, `No such File object: ${id}`);
    return file;
  }

  retrieveFile(id: string): unknown {
    return this.fileView(this.file(id));
  }

  fileContent(id: string): string {
    return this.file(id).content;
  }

  deleteFile(id: string): unknown {
    this.file(id);
    this.files.delete(id);
    return { id, object: 'file', deleted: true };
  }

  private fileView(f: StoredFile): unknown {
    return { id: f.id, object: 'file', bytes: f.bytes, created_at: seconds(f.createdAt), filename: f.filename, purpose: f.purpose, status: 'processed', status_details: null };
  }

  create(body: unknown): unknown {
    const parsed = createSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalidRequest(`${(issue?.path ?? []).map(String).join('.') || '(body)'}: ${issue?.message ?? 'invalid'}`);
    }
    const req = parsed.data;
    if (req.endpoint !== CHAT_ENDPOINT) throw invalidRequest(`endpoint: the offline model's batches run ${CHAT_ENDPOINT} only, not ${req.endpoint}`);
    const input = this.file(req.input_file_id);
    if (input.purpose !== 'batch') throw invalidRequest(`input_file_id: file ${input.id} has purpose '${input.purpose}', not 'batch'`);
    const now = this.settings.now();
    const batch: ChatBatch = { id: this.newId('batch_offline'), inputFileId: input.id, createdAt: now, endsAt: now + this.settings.processingMs, expire: false, erroredIds: new Set(), lines: [], metadata: req.metadata ?? null, status: 'in_progress', counts: { total: 0, completed: 0, failed: 0 } };
    const errors = this.read(input.content, batch);
    if (errors.length > 0) {
      // As the API does: a file it cannot run fails the batch whole, with a reason per line.
      Object.assign(batch, { status: 'failed', endedAt: now, errors, lines: [] });
    } else {
      const ids = batch.lines.map((l) => l.custom_id);
      batch.expire = ids.some((c) => this.settings.shared.takeFault('expired', c));
      batch.erroredIds = new Set(ids.filter((c) => this.settings.shared.takeFault('errored', c)));
      if (batch.expire) batch.endsAt = now + BATCH_EXPIRY_MS;
      batch.counts.total = ids.length;
    }
    this.batches.set(batch.id, batch);
    return this.view(batch);
  }

  /** The input file's lines into `batch`; the problems with it, if any (line numbers from 1). */
  private read(content: string, batch: ChatBatch): NonNullable<ChatBatch['errors']> {
    const errors: NonNullable<ChatBatch['errors']> = [];
    const seen = new Set<string>();
    content.split('\n').forEach((raw, at) => {
      if (raw.trim() === '') return;
      const problem = (code: string, message: string) => errors.push({ code, line: at + 1, message, param: null });
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        return problem('invalid_json_line', 'This line is not parseable as valid JSON.');
      }
      const line = inputLine.safeParse(json);
      if (!line.success) return problem('invalid_request', `${line.error.issues[0]?.path.join('.') || 'line'}: ${line.error.issues[0]?.message ?? 'invalid'}`);
      if (line.data.url !== CHAT_ENDPOINT) return problem('mismatched_endpoint', `The url of this line (${line.data.url}) is not the batch's endpoint (${CHAT_ENDPOINT}).`);
      if (seen.has(line.data.custom_id)) return problem('duplicate_custom_id', `The custom_id ${line.data.custom_id} appears more than once.`);
      const model = line.data.body.model;
      const first = batch.lines[0]?.body as { model?: unknown } | undefined;
      if (first && model !== first.model) return problem('mismatched_model', `The model of this line (${String(model)}) is not the batch's (${String(first.model)}): a batch runs one model.`);
      seen.add(line.data.custom_id);
      batch.lines.push({ custom_id: line.data.custom_id, body: line.data.body });
    });
    if (errors.length === 0 && batch.lines.length === 0) errors.push({ code: 'empty_file', line: null, message: 'The input file holds no requests.', param: null });
    return errors;
  }

  retrieve(id: string): unknown {
    return this.view(this.find(id));
  }

  cancel(id: string): unknown {
    const batch = this.find(id);
    this.settle(batch);
    if (batch.endedAt === undefined) this.end(batch, 'cancelled', (line) => this.unanswered(batch, line.custom_id, 'batch_cancelled', 'This request was cancelled with its batch.', 'canceled'));
    return this.view(batch);
  }

  /** Newest first, `limit` (1-100, default 20) after the batch `after`. */
  list(query: URLSearchParams): unknown {
    const all = [...this.batches.values()].reverse();
    const limit = Number(query.get('limit') ?? 20);
    if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100)) throw invalidRequest('limit: must be an integer from 1 to 100');
    const after = query.get('after');
    const from = after ? all.findIndex((b) => b.id === after) + 1 : 0;
    const page = all.slice(from, from + limit);
    return { object: 'list', data: page.map((b) => this.view(b)), first_id: page[0]?.id ?? null, last_id: page[page.length - 1]?.id ?? null, has_more: from + limit < all.length };
  }

  private find(id: string): ChatBatch {
    const batch = this.batches.get(id);
    if (!batch) throw new ApiError(404, `No batch found with id '${id}'.`);
    return batch;
  }

  private settle(batch: ChatBatch): void {
    if (batch.endedAt !== undefined || this.settings.now() < batch.endsAt) return;
    if (batch.expire) this.end(batch, 'expired', (line) => this.unanswered(batch, line.custom_id, 'batch_expired', 'This request could not be executed before the completion window expired.', 'expired'));
    else this.end(batch, 'completed', (line) => this.answer(batch, line));
  }

  /** Ends the batch: each line's output or error line, the files holding them, the counts. */
  private end(batch: ChatBatch, status: Status, lineOf: (line: ChatBatch['lines'][number]) => { ok: boolean; line: unknown }): void {
    batch.endedAt = this.settings.now();
    batch.status = status;
    const out: string[] = [];
    const failed: string[] = [];
    for (const line of batch.lines) {
      const r = lineOf(line);
      (r.ok ? out : failed).push(JSON.stringify(r.line));
    }
    batch.counts = { total: batch.lines.length, completed: out.length, failed: failed.length };
    if (out.length > 0) batch.outputFileId = this.addFile(`${batch.id}_output.jsonl`, 'batch_output', `${out.join('\n')}\n`).id;
    if (failed.length > 0) batch.errorFileId = this.addFile(`${batch.id}_error.jsonl`, 'batch_output', `${failed.join('\n')}\n`).id;
  }

  private record(batch: ChatBatch, customId: string, result: BatchEntry['result'], message?: WireMessage): void {
    this.settings.shared.record({ batchId: batch.id, customId, result, processedAt: this.settings.now(), ...(message ? { usage: message.usage, model: message.model } : {}) });
  }

  private lineId(batch: ChatBatch, customId: string): string {
    return `batch_req_${sha256HexNative(`${batch.id}:${customId}`).slice(0, 24)}`;
  }

  private unanswered(batch: ChatBatch, customId: string, code: string, message: string, result: BatchEntry['result']) {
    this.record(batch, customId, result);
    return { ok: false, line: { id: this.lineId(batch, customId), custom_id: customId, response: null, error: { code, message } } };
  }

  private refused(batch: ChatBatch, customId: string, error: ApiError) {
    this.record(batch, customId, 'errored');
    const response = { status_code: error.status, request_id: this.lineId(batch, customId).replace('batch_req_', 'req_offline_'), body: chatErrorBody(error.status, error.message) };
    return { ok: false, line: { id: this.lineId(batch, customId), custom_id: customId, response, error: null } };
  }

  private answer(batch: ChatBatch, line: ChatBatch['lines'][number]) {
    if (batch.erroredIds.has(line.custom_id)) return this.refused(batch, line.custom_id, new ApiError(500, 'Internal error (injected by the offline model).'));
    try {
      if ((line.body as { stream?: unknown }).stream === true) throw invalidRequest('stream: batch requests cannot stream');
      const planned = planMessages(toMessagesBody(line.body).messages, '2023-06-01', this.settings.messages, 0, { betas: [], prefixCaching: true, reasonUnasked: true });
      const reply = planned.reply;
      if (reply.kind === 'error') return this.refused(batch, line.custom_id, reply.error);
      if (reply.kind !== 'message') return this.refused(batch, line.custom_id, new ApiError(500, 'The scripted model dropped this request.'));
      this.settings.messages.cache.commit(reply.ticket);
      this.record(batch, line.custom_id, 'succeeded', reply.message);
      const response = { status_code: 200, request_id: this.lineId(batch, line.custom_id).replace('batch_req_', 'req_offline_'), body: chatCompletion(reply.message, this.settings.now()) };
      return { ok: true, line: { id: this.lineId(batch, line.custom_id), custom_id: line.custom_id, response, error: null } };
    } catch (e) {
      if (isApiError(e)) return this.refused(batch, line.custom_id, e);
      throw e;
    }
  }

  private view(batch: ChatBatch): unknown {
    this.settle(batch);
    const at = (status: Status) => (batch.status === status ? seconds(batch.endedAt) : null);
    const validating = batch.status === 'in_progress' && this.settings.now() < batch.createdAt + (this.settings.validatingMs ?? 0);
    return {
      id: batch.id,
      object: 'batch',
      endpoint: CHAT_ENDPOINT,
      errors: batch.errors ? { object: 'list', data: batch.errors } : null,
      input_file_id: batch.inputFileId,
      completion_window: '24h',
      status: validating ? 'validating' : batch.status,
      output_file_id: batch.outputFileId ?? null,
      error_file_id: batch.errorFileId ?? null,
      created_at: seconds(batch.createdAt),
      in_progress_at: batch.status === 'failed' || validating ? null : seconds(batch.createdAt),
      expires_at: seconds(batch.createdAt + BATCH_EXPIRY_MS),
      finalizing_at: batch.status === 'completed' ? seconds(batch.endedAt) : null,
      completed_at: at('completed'),
      failed_at: at('failed'),
      expired_at: at('expired'),
      cancelling_at: at('cancelled'),
      cancelled_at: at('cancelled'),
      request_counts: validating ? { total: 0, completed: 0, failed: 0 } : batch.counts,
      metadata: batch.metadata,
    };
  }
}
