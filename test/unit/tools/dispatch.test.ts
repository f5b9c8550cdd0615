/**
 * The entry point: unknown tools, malformed and wrapped arguments come back as
 * actionable is_error results; only cancellation throws.
 */
import { detectEnvelope } from '../../../src/activities/tools/args';
import { context, run, tempDir, type TempDir } from './kit';

let ws: TempDir;
beforeEach(() => {
  ws = tempDir();
});
afterEach(() => ws.remove());

describe('runBuiltinTool', () => {
  it('reports an unknown tool with the list of known ones', async () => {
    const out = await run('Delete', { file_path: 'x' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('Unknown tool "Delete"');
    expect(out.content).toContain('FileWrite');
  });

  it('lists zod issues in plain words with the expected fields', async () => {
    const out = await run('Read', { file_path: 42, limit: 0, colour: 'red' }, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^Invalid arguments for Read:/);
    expect(out.content).toMatch(/- file_path: .*expected string/i);
    expect(out.content).toMatch(/- limit: .*>=\s*1/);
    expect(out.content).toMatch(/colour/);
    expect(out.content).toContain('required: file_path; optional: offset, limit');
  });

  it('rejects a missing argument object', async () => {
    const out = await run('Glob', undefined, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('Invalid arguments for Glob');
  });

  it.each([
    [{ arguments: { file_path: '/x', content: 'y' } }, 'nested object'],
    [{ input: '{"file_path":"/x","content":"y"}' }, 'JSON-encoded'],
    [{ FileWrite: { file_path: '/x', content: 'y' } }, 'nested object'],
    ['{"file_path":"/x","content":"y"}', 'one JSON string'],
  ])('denies a nested argument envelope %#', async (raw, why) => {
    const out = await run('FileWrite', raw, context(ws.dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('must be flat');
    expect(out.content).toContain(why);
  });

  it('does not mistake flat string arguments for an envelope', () => {
    expect(detectEnvelope({ file_path: '/m/a.md', content: '{"a": 1}' })).toBeUndefined();
    expect(detectEnvelope({ command: 'echo {}' })).toBeUndefined();
  });

  it('throws an AbortError when the signal already fired', async () => {
    const ctx = context(ws.dir);
    ctx.controller.abort();
    await expect(run('Read', { file_path: 'x' }, ctx)).rejects.toMatchObject({ name: 'AbortError' });
  });
});
