/**
 * The offline Message Batches endpoint through the real SDK's `messages.batches.*`: a batch
 * in progress until its processing time has passed on the emulated clock, results as JSONL
 * answered by the same script as `/v1/messages`, list paging, cancel, and the injected
 * failures (an errored request, an expired batch).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { BATCH_EXPIRY_MS } from '../../../src/offline';
import { ask, useOfflineModel } from './helpers';

const MINUTE = 60_000;

async function resultsOf(client: Anthropic, id: string): Promise<Anthropic.Messages.Batches.MessageBatchIndividualResponse[]> {
  const out: Anthropic.Messages.Batches.MessageBatchIndividualResponse[] = [];
  for await (const r of await client.messages.batches.results(id)) out.push(r);
  return out;
}

describe('offline model: message batches', () => {
  // A base clock that stands still: only `advance` moves emulated time.
  const t = useOfflineModel({ batchProcessingMs: 5 * MINUTE, now: () => Date.UTC(2026, 0, 1) });

  it('processes a batch when its time has passed on the emulated clock, answering each request by its script', async () => {
    const batch = await t.client.messages.batches.create({
      requests: [
        { custom_id: 'a', params: ask('@reply first') },
        { custom_id: 'b', params: ask('@tool Read {"file_path":"x"}', { tools: [{ name: 'Read', input_schema: { type: 'object' } }] }) },
      ],
    });
    expect(batch).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null, request_counts: { processing: 2, succeeded: 0 } });
    expect(batch.id).toMatch(/^msgbatch_offline_/);
    expect(t.model.batches.entries()).toEqual([]);
    t.model.clock.advance(5 * MINUTE - 1);
    expect((await t.client.messages.batches.retrieve(batch.id)).processing_status).toBe('in_progress');
    t.model.clock.advance(1);
    const ended = await t.client.messages.batches.retrieve(batch.id);
    expect(ended).toMatchObject({ processing_status: 'ended', request_counts: { processing: 0, succeeded: 2, errored: 0 } });
    expect(ended.results_url).toBe(`${t.model.url}/v1/messages/batches/${batch.id}/results`);
    const results = await resultsOf(t.client, batch.id);
    const byId = new Map(results.map((r) => [r.custom_id, r.result]));
    const a = byId.get('a') as Anthropic.Messages.Batches.MessageBatchSucceededResult;
    expect(a.type).toBe('succeeded');
    expect(a.message.content).toEqual([{ type: 'text', text: 'first' }]);
    // The same request interactively gets the same message (ids derive from the conversation).
    const live = await t.client.messages.create(ask('@reply first'));
    expect(live.id).toBe(a.message.id);
    const b = byId.get('b') as Anthropic.Messages.Batches.MessageBatchSucceededResult;
    expect(b.message.stop_reason).toBe('tool_use');
    // The model's own accounting: each processed request once, with its usage.
    const entries = t.model.batches.entries();
    expect(entries.map((e) => [e.customId, e.result])).toEqual([['a', 'succeeded'], ['b', 'succeeded']]);
    expect(entries[0]?.usage?.output_tokens).toBe(a.message.usage.output_tokens);
    // Reading again processes nothing twice.
    await resultsOf(t.client, batch.id);
    expect(t.model.batches.entries()).toHaveLength(2);
  });

  it('answers results before the end with 404, and refuses bad bodies', async () => {
    const batch = await t.client.messages.batches.create({ requests: [{ custom_id: 'x', params: ask('@reply x') }] });
    await expect(t.client.messages.batches.results(batch.id)).rejects.toThrow(/results_url/);
    await expect(t.client.messages.batches.create({ requests: [{ custom_id: 'bad id!', params: ask('@reply x') }] })).rejects.toMatchObject({ status: 400 });
    await expect(t.client.messages.batches.create({ requests: [{ custom_id: 'd', params: ask('@reply 1') }, { custom_id: 'd', params: ask('@reply 2') }] })).rejects.toMatchObject({ status: 400 });
    await expect(t.client.messages.batches.retrieve('msgbatch_nope')).rejects.toMatchObject({ status: 404 });
  });

  it('lists batches newest first, in pages the SDK follows', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.client.messages.batches.create({ requests: [{ custom_id: `r${i}`, params: ask(`@reply ${i}`) }] })).id);
    const seen: string[] = [];
    for await (const b of t.client.messages.batches.list({ limit: 2 })) seen.push(b.id);
    expect(seen).toEqual([...ids].reverse());
    const first = await t.client.messages.batches.list({ limit: 2 });
    expect(first.has_more).toBe(true);
    expect(first.data.map((b) => b.id)).toEqual([ids[4], ids[3]]);
  });

  it('cancels a batch in progress: its requests end canceled and are never processed', async () => {
    const batch = await t.client.messages.batches.create({ requests: [{ custom_id: 'c', params: ask('@reply never') }] });
    const cancelled = await t.client.messages.batches.cancel(batch.id);
    expect(cancelled.cancel_initiated_at).not.toBeNull();
    expect(cancelled).toMatchObject({ processing_status: 'ended', request_counts: { canceled: 1 } });
    expect((await resultsOf(t.client, batch.id)).map((r) => r.result.type)).toEqual(['canceled']);
    expect(t.model.batches.entries().map((e) => [e.result, e.usage])).toEqual([['canceled', undefined]]);
  });

  it('injects an errored request and an expired batch; a scripted @fail errors its request too', async () => {
    t.model.batches.inject({ kind: 'errored', match: (id) => id === 'e1' });
    const one = await t.client.messages.batches.create({
      requests: [
        { custom_id: 'e1', params: ask('@reply fine') },
        { custom_id: 'ok', params: ask('@reply fine too') },
        { custom_id: 'f', params: ask('@fail 500\n@reply after') },
      ],
    });
    t.model.clock.advance(5 * MINUTE);
    const types = new Map((await resultsOf(t.client, one.id)).map((r) => [r.custom_id, r.result]));
    expect(types.get('e1')).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'api_error' } } });
    expect(types.get('ok')?.type).toBe('succeeded');
    const f = types.get('f') as Anthropic.Messages.Batches.MessageBatchErroredResult;
    expect(f.type).toBe('errored');
    expect(f.error.error.message).toMatch(/@fail 500/);

    t.model.batches.inject({ kind: 'expired' });
    const late = await t.client.messages.batches.create({ requests: [{ custom_id: 'z', params: ask('@reply late') }] });
    t.model.clock.advance(5 * MINUTE);
    expect((await t.client.messages.batches.retrieve(late.id)).processing_status).toBe('in_progress');
    t.model.clock.advance(BATCH_EXPIRY_MS);
    expect(await t.client.messages.batches.retrieve(late.id)).toMatchObject({ processing_status: 'ended', request_counts: { expired: 1 } });
    expect((await resultsOf(t.client, late.id)).map((r) => r.result.type)).toEqual(['expired']);
  });
});
