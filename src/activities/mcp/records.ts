/**
 * A server's tool list as forkflow records it at an agent's start: the tools the config
 * selects, named for the model (`mcp__<server>__<tool>`), each with its schema and
 * annotations. A list over the limit is refused whole (never cut silently); a tool the
 * provider could not take (its schema is not an object, or is past the JSON limits of
 * src/shared/wire/limits.ts) is left out and said so.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { hashJson } from '../../shared/base/hash';
import { INPUT_LIMITS, jsonLimitIssue } from '../../shared/wire/limits';
import { MCP_DEFAULTS, mcpIncludes, mcpToolName, type McpServerConfig, type McpServerRecord, type McpToolRecord } from '../../shared/tools/mcp';

/** A tool description longer than this is cut (the whole list goes into every request). */
const MAX_DESCRIPTION_CHARS = 8_000;

export function recordTools(server: string, config: McpServerConfig, tools: Tool[]): Extract<McpServerRecord, { ok: true }> | Extract<McpServerRecord, { ok: false }> {
  const selected = tools.filter((t) => mcpIncludes(config.include, t.name));
  const max = config.maxTools ?? MCP_DEFAULTS.maxTools;
  if (selected.length > max) {
    return {
      server,
      ok: false,
      error: `MCP server "${server}" lists ${selected.length} tools${config.include ? ' matching its include list' : ''}, more than the ${max} an agent is offered from one server: list the ones it needs in \`include\`, or raise \`maxTools\` (at most 1000).`,
    };
  }
  const records: McpToolRecord[] = [];
  const skipped: string[] = [];
  const names = new Set<string>();
  for (const t of selected) {
    const schema = t.inputSchema as Record<string, unknown> | undefined;
    if (!schema || typeof schema !== 'object' || schema.type !== 'object') {
      skipped.push(`${t.name}: its input schema is not a JSON Schema object`);
      continue;
    }
    // A hostile server's schema nested thousands deep would overflow every hash of the request.
    const tooBig = jsonLimitIssue(schema, INPUT_LIMITS, 'its input schema');
    if (tooBig) {
      skipped.push(`${t.name}: ${tooBig}`);
      continue;
    }
    const name = mcpToolName(server, t.name);
    if (names.has(name)) {
      skipped.push(`${t.name}: its name becomes ${name}, as an earlier tool's does`);
      continue;
    }
    names.add(name);
    const description = t.description ?? t.title;
    const a = t.annotations;
    const annotations = a
      ? Object.fromEntries((['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const).filter((k) => typeof a[k] === 'boolean').map((k) => [k, a[k] as boolean]))
      : undefined;
    records.push({
      name,
      tool: t.name,
      ...(description !== undefined ? { description: description.length > MAX_DESCRIPTION_CHARS ? `${description.slice(0, MAX_DESCRIPTION_CHARS)}…` : description } : {}),
      inputSchema: schema,
      ...(annotations && Object.keys(annotations).length ? { annotations } : {}),
    });
  }
  return { server, ok: true, tools: records, listHash: hashJson(records), ...(skipped.length ? { skipped } : {}) };
}
