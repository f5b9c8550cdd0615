/**
 * Every ```json block of the docs parses, names what it is in its info string (```json
 * fork-input, ```json providers, …: see inputs.ts) and is valid as that. A block that names
 * nothing, or something unknown, is an error.
 */
import { JSON_INPUTS } from './inputs';
import type { CodeBlock } from './markdown';

export const JSON_LANGS = new Set(['json', 'jsonc', 'json5']);

/** Where a JSON.parse error points, as a line of the block (JSON.parse says `position N`). */
function lineOf(text: string, message: string): number {
  const position = /position (\d+)/.exec(message);
  return position ? text.slice(0, Number(position[1])).split('\n').length : 1;
}

export function jsonProblems(blocks: CodeBlock[]): string[] {
  const known = Object.keys(JSON_INPUTS).join(', ');
  return blocks
    .filter((b) => JSON_LANGS.has(b.lang))
    .flatMap((block) => {
      const where = (line = 0) => `${block.file}:${block.line + line}`;
      if (block.lang !== 'json') return [`${where()}: a ${block.lang} block: write strict JSON (\`\`\`json <kind>)`];
      const kind = block.tags[0];
      if (kind === undefined) return [`${where()}: a JSON block must say what it is (\`\`\`json <kind>, one of: ${known})`];
      const input = JSON_INPUTS[kind];
      if (!input) return [`${where()}: unknown JSON kind "${kind}" (one of: ${known})`];
      const text = input.wrap ? input.wrap(block.body) : block.body;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        const message = (err as Error).message;
        return [`${where(lineOf(text, message))}: not JSON (${message})`];
      }
      return input.check(value).map((issue) => `${where(1)}: not a valid ${kind}: ${issue}`);
    });
}
