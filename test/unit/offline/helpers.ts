/**
 * Shared set-up for the offline model tests: one model per test, a real SDK client
 * pointed at it, raw HTTP for what the SDK cannot send, and deterministic filler text.
 */
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { type OfflineModel, type OfflineModelOptions, startOfflineModel } from '../../../src/offline';

/** A current model id (the SDK warns on deprecated ones). Minimum cacheable: 1024. */
export const MODEL = 'claude-sonnet-4-6';

export type MessageParams = Anthropic.MessageCreateParamsNonStreaming;
export type Tool = Anthropic.Tool;

/** Starts a fresh model before each test of the file and closes it after. */
export function useOfflineModel(opts: OfflineModelOptions = {}): { readonly model: OfflineModel; readonly client: Anthropic } {
  const ctx: { model?: OfflineModel; client?: Anthropic } = {};
  beforeEach(async () => {
    ctx.model = await startOfflineModel(opts);
    ctx.client = clientFor(ctx.model);
  });
  afterEach(async () => {
    await ctx.model?.close();
  });
  return {
    get model() {
      return ctx.model as OfflineModel;
    },
    get client() {
      return ctx.client as Anthropic;
    },
  };
}

export function clientFor(model: OfflineModel, apiKey = 'test-key'): Anthropic {
  return new Anthropic({ baseURL: model.url, apiKey, maxRetries: 0 });
}

/** A user-only request whose text is `text`. */
export function ask(text: string, extra: Partial<MessageParams> = {}): MessageParams {
  return { model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content: text }], ...extra };
}

export const TOOLS: Tool[] = ['Glob', 'Read', 'Grep'].map((name) => ({
  name,
  description: `The ${name} tool.`,
  input_schema: { type: 'object', properties: {} },
}));

/** Deterministic prose of about `tokens` tokens under the shared estimate (4 bytes each). */
export function filler(tokens: number, seed = 'x'): string {
  const words: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < tokens * 4; i++) {
    const w = `${seed}${i % 97}`;
    words.push(w);
    bytes += w.length + 1;
  }
  return words.join(' ');
}

/** Awaits a rejection and returns it as an SDK APIError (fails the test otherwise). */
export async function apiError(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof APIError) return e;
    throw e;
  }
  throw new Error('expected the request to fail');
}

/** The `error` object of an API error body as the SDK exposes it (`err.error.error`). */
export function errorOf(err: APIError): { type: string; message: string } {
  return (err.error as { error: { type: string; message: string } }).error;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** A POST over plain fetch, with 0.x-style headers unless overridden. */
export async function rawPost(model: OfflineModel, path: string, body: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const res = await fetch(`${model.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01', ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Event names of an SSE body, checking every event has an `event:` line. */
export function sseEvents(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const event = /^event: (.+)$/m.exec(chunk)?.[1];
      const data = /^data: (.+)$/m.exec(chunk)?.[1];
      if (!event || !data) throw new Error(`malformed SSE event: ${chunk}`);
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}
