/**
 * Images and documents through whole agents (issue 43), against the real dev server and the
 * offline model, which charges what the API would (src/shared/messages-api/media-tokens.ts):
 * - a fork from a parent holding a 4.5 MB PNG completes on a 200K window (its base64 counted
 *   as text was 1.5 million tokens, refused before sending);
 * - an MCP tool that returns a 1 MB screenshot each turn (12 turns; 30 with
 *   FORKFLOW_MEDIA_TURNS=30): each image charged by its pixels, the agent within a 100K-token budget;
 * - Read of a PNG, a JPEG and a 3-page PDF in a read-only fork reaches the model as image and
 *   document blocks; an oversize one is refused by name;
 * - a finished root's own row in `perAgent` says it ended; the web view's list gives a running
 *   agent its live counters.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withLiveCounters } from '../../src/cli/web/live-rows';
import { totalInputTokens, totalTokens, type MessageParam } from '../../src/shared/messages-api/anthropic';
import type { CacheSafeParams } from '../../src/shared/wire/cache-safe-params';
import { imageInfo } from '../../src/shared/messages-api/image-size';
import { anthropicImageTokens, pdfPageTokens } from '../../src/shared/messages-api/media-tokens';
import { toolDefinition } from '../../src/shared/tools/schemas';
import { startHarness, type Harness } from '../kit/env';
import { hostileServer, testServersConsent } from '../kit/mcp/servers';
import { imageBlock, jpeg, pdf, png, pngOfBase64Size } from '../kit/media';
import { bodyOf } from '../kit/requests';
import { agentStep, script, toolStep } from '../kit/tree';
import { waitFor } from '../kit/wait';

jest.setTimeout(600_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'media', consent: testServersConsent() });
});
afterAll(() => h.close());

/** The model requests that carry `mark` and were answered (a retried attempt's lost request is left out). */
const requestsWith = (mark: string) => h.model.log.entries().filter((e) => e.rawBody.includes(mark) && e.outcome === 'completed' && e.usage !== undefined);
const usageTotal = (u: { input_tokens: number; cache_read_input_tokens?: number | null; cache_creation_input_tokens?: number | null }) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);

test('a fork from a parent holding a 4.5 MB PNG completes on a 200K window, charged its pixels', async () => {
  const shot = imageBlock(pngOfBase64Size(4.5 * 1024 * 1024));
  expect(shot.source.data.length).toBeGreaterThan(4.4 * 1024 * 1024);
  const { width, height } = imageInfo(shot.source.data)!;
  const messages: MessageParam[] = [
    { role: 'user', content: [shot, { type: 'text', text: 'Parent with a big PNG. What is in this image?' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Noise, mostly.' }] },
  ];
  const parent: CacheSafeParams = { system: 'You look at images.', tools: [toolDefinition('Read')], model: 'claude-sonnet-5-5', messages, maxTokens: 1024 };
  const result = await h.forkflow.fork({ agentId: 'media-big-png', parent, prompt: 'Describe it in one word.\n@reply noise' }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'noise' });
  const [request] = requestsWith('Parent with a big PNG.');
  // The image is about 1,600 tokens of a request that is a few thousand in all.
  const total = usageTotal(request!.usage!);
  expect(total).toBeLessThan(4_000);
  expect(total).toBeGreaterThan(anthropicImageTokens(width, height));
  expect(anthropicImageTokens(width, height)).toBeLessThanOrEqual(1600);
  expect((await h.forkflow.status('media-big-png')).context?.window).toBe(200_000);
});

/**
 * Turns of the screenshot agent: 12 by default (a few minutes); FORKFLOW_MEDIA_TURNS=30 is the
 * issue's figure (about half an hour on a loaded 2-core machine: each request carries every
 * screenshot so far).
 */
const TURNS = Number(process.env.FORKFLOW_MEDIA_TURNS ?? 12);
/** A 1 MB PNG file: 1.33 MB of base64, over the 1 MiB an MCP result's text may have. */
const SHOT_BASE64 = Math.ceil((1024 * 1024 * 4) / 3);

test(`an MCP tool returning a 1 MB screenshot each turn for ${TURNS} turns: every image charged its pixels, the agent within a 100K-token budget`, async () => {
  const mark = 'Screenshot agent.';
  const prompt = script(mark, `@repeat ${TURNS} ${toolStep('mcp__shots__screenshot', {})}`, `@reply looked ${TURNS} times`);
  const handle = await h.forkflow.start({ agentId: 'media-shots', prompt, mcpServers: { shots: hostileServer('screenshot-server', [String(SHOT_BASE64)], { startTimeout: '60s' }) }, requiredMcpServers: ['shots'], budget: { maxTokens: 100_000 }, maxTurns: TURNS + 5 });
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', text: `looked ${TURNS} times`, toolUses: TURNS });
  // One request per turn (by its message count): a retried call answered twice is one turn.
  const requests = [...new Map(requestsWith(mark).map((e) => [bodyOf(e).messages.length, e])).values()].sort((a, b) => bodyOf(a).messages.length - bodyOf(b).messages.length);
  expect(requests).toHaveLength(TURNS + 1);
  // What each turn added: the screenshot at its pixel count, and a few tokens of text around it.
  const last = bodyOf(requests[TURNS]!);
  const images = last.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).flatMap((b) => (b.type === 'tool_result' && Array.isArray(b.content) ? b.content : [])).filter((b) => b.type === 'image');
  expect(images).toHaveLength(TURNS);
  for (let i = 1; i < requests.length; i++) {
    const added = usageTotal(requests[i]!.usage!) - usageTotal(requests[i - 1]!.usage!);
    const image = images[i - 1] as unknown as { source: { data: string } };
    expect(image.source.data.length).toBeGreaterThan(1024 * 1024);
    const { width, height } = imageInfo(image.source.data)!;
    expect(added - anthropicImageTokens(width, height)).toBeGreaterThan(0);
    expect(added - anthropicImageTokens(width, height)).toBeLessThan(200);
  }
  const status = await handle.status();
  expect(status.budgetUsed).toBeLessThanOrEqual(100_000);
  expect(totalInputTokens(result.usage)).toBeGreaterThan(0);
  // 30 turns of megabyte requests: slow on a loaded machine, bounded by the agent itself.
}, 1_800_000);

test('Read of a PNG, a JPEG and a 3-page PDF in a read-only fork reaches the model as image and document blocks; an oversize image is refused by name', async () => {
  const files = { 'shot.png': png(1280, 800), 'photo.jpg': jpeg(3024, 4032, { exifBytes: 20_000 }), 'report.pdf': pdf(3, { text: (p) => `page ${p} of the report` }), 'huge.png': pngOfBase64Size(5.4 * 1024 * 1024) };
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(h.workspaceRoot, name), bytes);
  const mark = 'Read-only media reader.';
  const reads = Object.keys(files).map((file_path) => ({ name: 'Read', input: { file_path } }));
  const prompt = script(mark, `@tools ${JSON.stringify(reads)}`, '@reply seen them');
  const result = await h.forkflow.fork({ agentId: 'media-reader', prompt, toolFilter: 'readOnly' }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'seen them', toolUses: 4 });
  const requests = requestsWith(mark);
  const sent = bodyOf(requests[requests.length - 1]!);
  const results = sent.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content)).filter((b) => b.type === 'tool_result');
  expect(results).toHaveLength(4);
  const [pngResult, jpgResult, pdfResult, huge] = results as { content: unknown; is_error?: boolean }[];
  expect(pngResult!.content).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: files['shot.png'].toString('base64') } }]);
  expect(jpgResult!.content).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: files['photo.jpg'].toString('base64') } }]);
  expect(pdfResult!.content).toEqual([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: files['report.pdf'].toString('base64') } }]);
  expect(huge).toMatchObject({ is_error: true, content: expect.stringMatching(/^huge\.png is \d\.\d MB; the API takes an image of at most 5 MB as base64/) as string });
  // The model was charged the rules: the two images and three pages, on top of the text.
  const before = usageTotal(requests[0]!.usage!);
  const after = usageTotal(requests[requests.length - 1]!.usage!);
  const media = anthropicImageTokens(1280, 800) + anthropicImageTokens(3024, 4032) + pdfPageTokens(3);
  expect(after - before).toBeGreaterThan(media);
  expect(after - before).toBeLessThan(media + 600);
  // A read-only fork: its tools were the read-only ones.
  expect(bodyOf(requests[0]!).tools!.map((t) => t.name)).not.toContain('FileWrite');
});

test("a finished root's own row in perAgent says ended; the web view's list gives a running agent its live counters", async () => {
  const root = await h.forkflow.startAgent({ agentId: 'media-root', prompt: script('Coordinate.', agentStep({ description: 'helper', prompt: '@reply helped' }), '@reply waiting', '@reply all done') });
  const done = await root.result();
  expect([done.status, done.text, done.error]).toEqual(['completed', 'all done', undefined]);
  const rows = (await h.forkflow.status('media-root')).perAgent ?? [];
  expect(rows.length).toBe(2);
  for (const row of rows) expect([row.agentId, row.state]).toEqual([row.agentId, 'ended']);

  const idle = await h.forkflow.start({ agentId: 'media-idle', prompt: 'Wait for me.\n@reply waiting', idleTimeout: '5m' });
  await waitFor(async () => ((await idle.status()).state === 'idle' ? true : undefined), 'the agent to wait');
  const listed = await waitFor(async () => (await h.forkflow.list({ query: "ExecutionStatus = 'Running'" })).find((r) => r.agentId === 'media-idle'), 'the agent to be listed');
  const now = await idle.status();
  const [live] = await withLiveCounters([listed], (id) => h.forkflow.status(id));
  expect(live).toMatchObject({ agentId: 'media-idle', state: 'idle', turns: now.turns, totalTokens: totalTokens(now.usage) });
  expect(live!.totalTokens).toBeGreaterThan(0);
  await idle.cancel();
});
