/**
 * Images and documents at their real token cost: the providers' published rules with their
 * own examples, sizes read from the bytes of every format, the request estimate and the
 * offline model's accounting (one function, so the emulator charges what the API would).
 */
import { imageInfo } from '../../../src/shared/messages-api/image-size';
import { anthropicImageTokens, anthropicResize, maxImageTokens, mediaTokens, openaiImageTokens, pdfPageTokens, PDF_PAGE } from '../../../src/shared/messages-api/media-tokens';
import { pdfFacts } from '../../../src/shared/messages-api/pdf-pages';
import { estimateRequestTokens } from '../../../src/shared/messages-api/request-tokens';
import { estimateJsonTokens } from '../../../src/shared/messages-api/tokens';
import { documentBlock, gif, imageBlock, jpeg, pdf, png, pngOfBase64Size, webp } from '../../kit/media';

describe("Anthropic's image rule (docs: Vision, 'Calculate image costs')", () => {
  it("gives the docs' own examples: 200×200 → 54, 1000×1000 → 1,334, 1092×1092 → 1,590", () => {
    expect(anthropicImageTokens(200, 200)).toBe(54);
    expect(anthropicImageTokens(1000, 1000)).toBe(1334);
    expect(anthropicImageTokens(1092, 1092)).toBe(1590);
  });

  it('scales down an image over 1568 px on its long edge or over ~1,600 tokens, keeping its aspect ratio', () => {
    expect(anthropicResize(1092, 1092)).toEqual({ width: 1092, height: 1092 });
    const wide = anthropicResize(4000, 1000);
    expect(wide.width).toBe(1568);
    expect(wide.height).toBe(392);
    const big = anthropicResize(3000, 3000);
    expect(big.width).toBe(big.height);
    expect(anthropicImageTokens(3000, 3000)).toBeLessThanOrEqual(1600);
    expect(anthropicImageTokens(3000, 3000)).toBeGreaterThan(1590);
    // No image costs more than the cap, whatever its size.
    for (const [w, h] of [[8000, 8000], [8000, 100], [100, 8000], [2560, 1440], [1568, 784]] as const) expect(anthropicImageTokens(w, h)).toBeLessThanOrEqual(maxImageTokens('anthropic'));
  });
});

describe("OpenAI's tile rule (docs: Images and vision, 'Calculating costs')", () => {
  it("gives the docs' examples: 1024×1024 high → 765, 2048×4096 → 1,105, detail low → 85", () => {
    expect(openaiImageTokens(1024, 1024, 'high')).toBe(765);
    expect(openaiImageTokens(2048, 4096)).toBe(1105);
    expect(openaiImageTokens(4096, 8192, 'low')).toBe(85);
  });

  it('does not scale a small image up: 512×512 is one tile', () => {
    expect(openaiImageTokens(512, 512)).toBe(85 + 170);
    expect(maxImageTokens('openai')).toBe(85 + 170 * 8);
  });
});

describe('sizes read from the image bytes (base64 header only)', () => {
  const b64 = (b: Buffer) => b.toString('base64');
  it('PNG (IHDR), JPEG (SOF after a large EXIF), GIF, WebP (VP8X, VP8L, VP8)', () => {
    expect(imageInfo(b64(png(1280, 800)))).toEqual({ format: 'image/png', width: 1280, height: 800 });
    expect(imageInfo(b64(jpeg(3024, 4032, { exifBytes: 60_000 })))).toEqual({ format: 'image/jpeg', width: 3024, height: 4032 });
    expect(imageInfo(b64(gif(320, 200)))).toEqual({ format: 'image/gif', width: 320, height: 200 });
    expect(imageInfo(b64(webp(1920, 1080, 'VP8X')))).toEqual({ format: 'image/webp', width: 1920, height: 1080 });
    expect(imageInfo(b64(webp(640, 480, 'VP8L')))).toEqual({ format: 'image/webp', width: 640, height: 480 });
    expect(imageInfo(b64(webp(800, 600, 'VP8 ')))).toEqual({ format: 'image/webp', width: 800, height: 600 });
  });

  it('anything else, or a cut header, is no image', () => {
    expect(imageInfo(b64(Buffer.from('just some text, not an image')))).toBeUndefined();
    expect(imageInfo(b64(png(10, 10)).slice(0, 12))).toBeUndefined();
    expect(imageInfo(b64(jpeg(10, 10)).slice(0, 40))).toBeUndefined();
    expect(imageInfo('!!!!not base64')).toBeUndefined();
  });
});

describe('PDF pages', () => {
  it('counts the page objects of a plain PDF and notes encryption', () => {
    expect(pdfFacts(pdf(3).toString('base64'))).toMatchObject({ pages: 3, encrypted: false });
    expect(pdfFacts(pdf(1, { encrypted: true }).toString('base64'))).toMatchObject({ pages: 1, encrypted: true });
  });

  it('costs its pages by the chosen estimate (1,500 text + a page image at the 1,600 cap)', () => {
    expect(PDF_PAGE.textTokens + PDF_PAGE.imageTokens).toBe(3100);
    expect(mediaTokens(documentBlock(pdf(3)), 'anthropic')).toBe(pdfPageTokens(3));
    expect(mediaTokens(documentBlock(pdf(3)), 'anthropic')).toBe(9300);
  });
});

describe('the request estimate', () => {
  it('counts a 4.5 MB PNG at its pixels, not its base64 (the old estimate: over a million tokens)', () => {
    const block = imageBlock(pngOfBase64Size(4.5 * 1024 * 1024));
    expect(block.source.data.length).toBeGreaterThan(4.4 * 1024 * 1024);
    const info = imageInfo(block.source.data)!;
    const req = { messages: [{ role: 'user' as const, content: [block, { type: 'text' as const, text: 'What is in it?' }] }] };
    const tokens = estimateRequestTokens(req);
    expect(tokens).toBeLessThan(1700);
    expect(tokens - estimateRequestTokens({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in it?' }] }] })).toBe(anthropicImageTokens(info.width, info.height));
    // The estimate of before, kept for histories recorded with it.
    expect(estimateRequestTokens(req, 'bytes')).toBeGreaterThan(1_000_000);
  });

  it('counts a tool result holding a screenshot as its text plus the image', () => {
    const shot = imageBlock(png(1280, 800));
    const result = { type: 'tool_result', tool_use_id: 'tu_1', content: [{ type: 'text', text: 'screenshot taken' }, shot] };
    expect(mediaTokens(result, 'anthropic')).toBe(estimateJsonTokens({ type: 'tool_result', tool_use_id: 'tu_1', content: [{ type: 'text', text: 'screenshot taken' }] }) + anthropicImageTokens(1280, 800));
    expect(mediaTokens(result, 'openai')).toBe(estimateJsonTokens({ type: 'tool_result', tool_use_id: 'tu_1', content: [{ type: 'text', text: 'screenshot taken' }] }) + openaiImageTokens(1280, 800));
  });

  it('charges an image of unknown size (a URL) the most one image costs', () => {
    expect(mediaTokens({ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }, 'anthropic')).toBe(1600);
    expect(mediaTokens({ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }, 'openai')).toBe(1445);
  });
});
