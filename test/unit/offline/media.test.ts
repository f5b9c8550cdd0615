/**
 * The offline model charges images and documents what the API would (the rules of
 * src/shared/messages-api/media-tokens.ts, one function with forkflow's estimate), through the real SDKs:
 * Messages and count_tokens by Anthropic's rules, Chat Completions by OpenAI's tiles; and it
 * refuses what the API refuses, with the block's path.
 */
import { APIError } from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { anthropicImageTokens, openaiImageTokens, pdfPageTokens } from '../../../src/shared/messages-api/media-tokens';
import { documentBlock, imageBlock, jpeg, pdf, png, pngOfBase64Size } from '../../kit/media';
import { MODEL, useOfflineModel } from './helpers';

type Block = Record<string, unknown>;

describe('offline model: images and documents at their real cost', () => {
  const t = useOfflineModel();

  async function inputOf(content: Block[]): Promise<number> {
    const res = await t.client.messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: [...content, { type: 'text', text: '@reply seen' }] as never }] });
    return res.usage.input_tokens;
  }

  it("charges a PNG, a JPEG and a 3-page PDF by the published rules (Messages and count_tokens agree)", async () => {
    const base = await inputOf([]);
    expect((await inputOf([imageBlock(png(1000, 1000))])) - base).toBe(anthropicImageTokens(1000, 1000));
    expect(anthropicImageTokens(1000, 1000)).toBe(1334);
    expect((await inputOf([imageBlock(jpeg(4032, 3024, { exifBytes: 30_000 }), 'image/jpeg')])) - base).toBe(anthropicImageTokens(4032, 3024));
    expect((await inputOf([documentBlock(pdf(3))])) - base).toBe(pdfPageTokens(3));
    const counted = await t.client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: [imageBlock(png(200, 200)), { type: 'text', text: '@reply seen' }] as never }] });
    expect(counted.input_tokens - base).toBe(54);
  });

  it('charges a 4.5 MB PNG about 1,600 tokens, where its base64 counted as text was over a million', async () => {
    const big = imageBlock(pngOfBase64Size(4.5 * 1024 * 1024));
    const tokens = (await inputOf([big])) - (await inputOf([]));
    expect(tokens).toBeGreaterThan(1500);
    expect(tokens).toBeLessThanOrEqual(1600);
  });

  it('refuses an image over 5 MB, over 8000 px, or not the format it names, with its path', async () => {
    const refused = async (content: Block[]) => {
      const err = await inputOf(content).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(400);
      return (err as APIError).message;
    };
    expect(await refused([imageBlock(pngOfBase64Size(5.2 * 1024 * 1024))])).toMatch(/messages\.0\.content\.0: image exceeds 5 MB maximum/);
    expect(await refused([imageBlock(png(9000, 10))])).toMatch(/messages\.0\.content\.0: image is 9000×10 px, over the API's 8000 px a side/);
    expect(await refused([imageBlock(png(10, 10), 'image/jpeg')])).toMatch(/its bytes are image\/png, but its media type says image\/jpeg/);
    expect(await refused([documentBlock(pdf(1, { encrypted: true }))])).toMatch(/encrypted/);
  });

  it("Chat Completions: image_url costs OpenAI's tiles (detail low 85, 1024×1024 high 765)", async () => {
    const openai = new OpenAI({ baseURL: `${t.model.url}/v1`, apiKey: 'test-key', maxRetries: 0 });
    const ask = async (parts: OpenAI.ChatCompletionContentPart[]) =>
      (await openai.chat.completions.create({ model: 'gpt-4.1-mini', messages: [{ role: 'user', content: [...parts, { type: 'text', text: '@reply seen' }] }] })).usage!.prompt_tokens;
    const url = `data:image/png;base64,${png(1024, 1024).toString('base64')}`;
    const base = await ask([]);
    expect((await ask([{ type: 'image_url', image_url: { url, detail: 'low' } }])) - base).toBe(85);
    expect((await ask([{ type: 'image_url', image_url: { url, detail: 'high' } }])) - base).toBe(openaiImageTokens(1024, 1024, 'high'));
    expect(openaiImageTokens(1024, 1024, 'high')).toBe(765);
  });
});
