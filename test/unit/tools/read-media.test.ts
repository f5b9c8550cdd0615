/**
 * Read of images and PDFs on a real temporary workspace: image and document blocks within the
 * API's limits, oversize and false files refused by name, PDF pages selected by an
 * incremental update that a page count (and the token estimate) then sees.
 */
import { mediaTokens, pdfPageTokens } from '../../../src/shared/messages-api/media-tokens';
import { pdfFacts } from '../../../src/shared/messages-api/pdf-pages';
import { parsePages, selectPages } from '../../../src/activities/tools/pdf-subset';
import { gif, jpeg, packedPdf, pdf, png, pngOfBase64Size, webp } from '../../kit/media';
import { context, run, tempDir, type TempDir } from './kit';

let ws: TempDir;
beforeEach(() => {
  ws = tempDir();
});
afterEach(() => ws.remove());

type Block = { type: string; source?: { type: string; media_type: string; data: string }; text?: string };
const blocksOf = (out: { blocks?: unknown[] }) => (out.blocks ?? []) as Block[];

describe('Read of images', () => {
  it.each([
    ['shot.png', png(1280, 800), 'image/png'],
    ['photo.jpg', jpeg(4032, 3024), 'image/jpeg'],
    ['photo.jpeg', jpeg(640, 480), 'image/jpeg'],
    ['anim.gif', gif(320, 200), 'image/gif'],
    ['pic.webp', webp(1024, 768), 'image/webp'],
  ])('%s comes back as an image block of its bytes', async (name, bytes, mediaType) => {
    ws.file(name, bytes);
    const out = await run('Read', { file_path: name }, context(ws.dir));
    expect(out.isError).toBe(false);
    const [block] = blocksOf(out);
    expect(block).toEqual({ type: 'image', source: { type: 'base64', media_type: mediaType, data: bytes.toString('base64') } });
    expect(out.content).toMatch(new RegExp(`^${name}: ${mediaType}, \\d+×\\d+ px$`));
  });

  it('a .png that is a JPEG is sent as what its bytes are', async () => {
    ws.file('misnamed.png', jpeg(100, 100));
    const [block] = blocksOf(await run('Read', { file_path: 'misnamed.png' }, context(ws.dir)));
    expect(block?.source?.media_type).toBe('image/jpeg');
  });

  it('refuses by name an image over 5 MB of base64, one over 8000 px, and one that is no image', async () => {
    ws.file('huge.png', pngOfBase64Size(5.3 * 1024 * 1024));
    const huge = await run('Read', { file_path: 'huge.png' }, context(ws.dir));
    expect(huge).toMatchObject({ isError: true, content: expect.stringMatching(/^huge\.png is 4\.0 MB; the API takes an image of at most 5 MB as base64/) as string });
    expect(huge.blocks).toBeUndefined();
    ws.file('wide.png', png(9000, 2));
    expect(await run('Read', { file_path: 'wide.png' }, context(ws.dir))).toMatchObject({ isError: true, content: 'wide.png cannot be shown to the model: image is 9000×2 px, over the API\'s 8000 px a side.' });
    ws.file('fake.gif', Buffer.from('not a gif at all'));
    expect(await run('Read', { file_path: 'fake.gif' }, context(ws.dir))).toMatchObject({ isError: true, content: expect.stringMatching(/^fake\.gif cannot be shown to the model: its bytes are not a PNG, JPEG, GIF or WebP/) as string });
  });

  it('stays confined: an image outside the workspace is denied as any file is', async () => {
    const outside = tempDir('forkflow-outside-');
    try {
      const p = outside.file('secret.png', png(10, 10));
      const out = await run('Read', { file_path: p }, context(ws.dir));
      expect(out.isError).toBe(true);
      expect(out.blocks).toBeUndefined();
    } finally {
      outside.remove();
    }
  });
});

describe('Read of PDFs', () => {
  it('a 3-page PDF comes back as a document block; pages "2-3" as a PDF of those two pages', async () => {
    const doc = pdf(3, { text: (p) => `text of page ${p}` });
    ws.file('report.pdf', doc);
    const whole = await run('Read', { file_path: 'report.pdf' }, context(ws.dir));
    expect(whole).toMatchObject({ isError: false, content: 'report.pdf: PDF, 3 pages' });
    expect(blocksOf(whole)).toEqual([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: doc.toString('base64') } }]);

    const some = await run('Read', { file_path: 'report.pdf', pages: '2-3' }, context(ws.dir));
    expect(some.isError).toBe(false);
    const [line, document] = blocksOf(some);
    expect(line).toEqual({ type: 'text', text: 'report.pdf: PDF, pages 2-3 of 3' });
    expect(pdfFacts(document!.source!.data)).toMatchObject({ pages: 2, encrypted: false });
    expect(mediaTokens(document as never, 'anthropic')).toBe(pdfPageTokens(2));
  });

  it('refuses pages past the end, pages of an image, an encrypted PDF and a file that is no PDF', async () => {
    ws.file('r.pdf', pdf(3));
    expect(await run('Read', { file_path: 'r.pdf', pages: '3-5' }, context(ws.dir))).toMatchObject({ isError: true, content: 'r.pdf: pages "3-5" is past the end: the PDF has 3 pages' });
    ws.file('i.png', png(4, 4));
    expect(await run('Read', { file_path: 'i.png', pages: '1' }, context(ws.dir))).toMatchObject({ isError: true, content: 'pages is for PDF files; i.png is an image. Read it without pages.' });
    ws.file('locked.pdf', pdf(1, { encrypted: true }));
    expect(await run('Read', { file_path: 'locked.pdf' }, context(ws.dir))).toMatchObject({ isError: true, content: expect.stringMatching(/^locked\.pdf is encrypted/) as string });
    ws.file('nope.pdf', Buffer.from('plain text'));
    expect(await run('Read', { file_path: 'nope.pdf' }, context(ws.dir))).toMatchObject({ isError: true, content: 'nope.pdf is not a PDF (it does not start with %PDF-).' });
  });

  it('page lists: ranges and singles, in order, each once', () => {
    expect(parsePages('1-3', 5)).toEqual([1, 2, 3]);
    expect(parsePages('4, 2-3,2', 5)).toEqual([4, 2, 3]);
    expect(parsePages('0-1', 5)).toMatch(/not a range/);
  });

  it('selects pages of a PDF kept in compressed object streams with an xref stream; the result counts as those pages', () => {
    const packed = packedPdf(4);
    // Nothing of its page tree is in the open: counted by size until pages are picked.
    expect(pdfFacts(packed.toString('base64')).pages).toBeUndefined();
    const picked = selectPages(packed, '2,4');
    if (!picked.ok) throw new Error(picked.message);
    expect(picked.total).toBe(4);
    expect(pdfFacts(picked.pdf.toString('base64')).pages).toBe(2);
    // The update is an xref stream, as the file's own is, pointing back at it.
    const tail = picked.pdf.subarray(packed.length).toString('latin1');
    expect(tail).toMatch(/\/Type \/XRef .*\/Prev \d+/);
    expect(tail).toMatch(/\/Kids \[4 0 R 6 0 R\] \/Count 2/);
    expect(picked.pdf.subarray(0, packed.length).equals(packed)).toBe(true);
  });
});
