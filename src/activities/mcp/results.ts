/**
 * An MCP tool result as the model reads it: text and images as content blocks; what the
 * Messages API cannot carry (audio, binary resources, links) as a line saying what it was;
 * structured content as JSON when there is no text. Text over the size limit becomes an
 * error saying so (the model can ask for less), never a cut it cannot see. An image is held
 * to the API's own limits instead (5 MB of base64, 8000 px a side, its real format: a
 * screenshot is often over a megabyte); one the API would refuse becomes a line naming why,
 * so it never reaches a request (where it would fail every later turn too).
 */
import { imageIssue } from '../../shared/messages-api/media-limits';
import type { McpCallResult } from '../../shared/tools/mcp-io';

type Block = Extract<McpCallResult, { kind: 'result' }>['content'] extends infer C ? (C extends (infer B)[] ? B : never) : never;

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** A field of a server's answer as text (anything but a string or number reads as empty). */
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : fallback);

function blockOf(item: Record<string, unknown>): Block {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: str(item.text) };
    case 'image': {
      const mime = str(item.mimeType);
      if (IMAGE_TYPES.has(mime) && typeof item.data === 'string') {
        const block = { type: 'image' as const, source: { type: 'base64' as const, media_type: mime, data: item.data } };
        const issue = imageIssue(block);
        return issue ? { type: 'text', text: `[an image (${mime}) refused: ${issue}]` } : block;
      }
      return { type: 'text', text: `[an image of type ${mime || 'unknown'} the model cannot be shown]` };
    }
    case 'audio':
      return { type: 'text', text: `[audio (${str(item.mimeType, 'unknown type')}) the model cannot be given]` };
    case 'resource_link':
      return { type: 'text', text: `[resource: ${str(item.name)} <${str(item.uri)}>]` };
    case 'resource': {
      const r = (item.resource ?? {}) as Record<string, unknown>;
      if (typeof r.text === 'string') return { type: 'text', text: `<resource uri="${str(r.uri)}">\n${r.text}\n</resource>` };
      return { type: 'text', text: `[binary resource <${str(r.uri)}> (${str(r.mimeType, 'unknown type')})]` };
    }
    default:
      return { type: 'text', text: `[content of type ${str(item.type, 'unknown')}]` };
  }
}

/** The text's bytes (images are held to the API's per-image limits instead). */
function byteLength(blocks: Block[]): number {
  return blocks.reduce((n, b) => n + (b.type === 'text' ? Buffer.byteLength(b.text) : 0), 0);
}

/** The model's view of a `tools/call` result (`raw` as the SDK returned it). */
export function mcpResultContent(raw: Record<string, unknown>, name: string, maxBytes: number): Extract<McpCallResult, { kind: 'result' }> {
  const items = Array.isArray(raw.content) ? (raw.content as Record<string, unknown>[]) : [];
  let blocks = items.map(blockOf);
  if (blocks.length === 0 && raw.structuredContent !== undefined) blocks = [{ type: 'text', text: JSON.stringify(raw.structuredContent) }];
  if (blocks.length === 0 && 'toolResult' in raw) blocks = [{ type: 'text', text: JSON.stringify(raw.toolResult) }];
  const bytes = byteLength(blocks);
  if (bytes > maxBytes) {
    return { kind: 'result', isError: true, content: `${name} returned ${bytes} bytes, more than the ${maxBytes} a tool result may have: ask for less (a narrower query, a smaller range).` };
  }
  const isError = raw.isError === true;
  const onlyText = blocks.every((b) => b.type === 'text');
  return { kind: 'result', isError, content: onlyText ? blocks.map((b) => (b as { text: string }).text).join('\n') : blocks };
}
