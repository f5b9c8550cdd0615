/** Output for people (tables, short lines) and for machines (`--json`). */
import Table from 'cli-table3';
import type { Usage } from '../shared/messages-api/anthropic';
import { oneLine } from '../shared/base/text';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function table(head: string[], rows: (string | number | undefined)[][]): string {
  // Colours only on a terminal: piped output (scripts, CI logs) stays plain text.
  const style = process.stdout.isTTY ? { head: ['cyan'], border: ['grey'] } : { head: [], border: [] };
  const t = new Table({ head, style });
  for (const row of rows) t.push(row.map((c) => (c === undefined ? '' : String(c))));
  return t.toString();
}

export function formatUsage(u: Usage): string {
  return `in ${u.inputTokens} · cache read ${u.cacheReadInputTokens} · cache write ${u.cacheCreationInputTokens} · out ${u.outputTokens}`;
}

export function truncate(text: string | undefined, max: number): string {
  if (!text) return '';
  return oneLine(text, max);
}
