/**
 * The demo's live view: one row per agent, redrawn in place on a terminal, and printed only
 * when something changes otherwise (CI logs stay readable).
 */
import logUpdate from 'log-update';
import type { ForkStatus } from '../../shared/wire/status';
import { table } from '../output';

function k(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

export function renderStatuses(rows: { label: string; status?: ForkStatus; note?: string }[]): string {
  return table(
    ['fork', 'state', 'turn', 'tools', 'input', 'cache read', 'cache write', 'output', 'now'],
    rows.map(({ label, status: s, note }) =>
      s
        ? [label, s.state, `${s.turns}/${s.maxTurns}`, s.toolUses, k(s.usage.inputTokens), k(s.usage.cacheReadInputTokens), k(s.usage.cacheCreationInputTokens), k(s.usage.outputTokens), note ?? s.activity ?? '']
        : [label, 'starting', '', '', '', '', '', '', note ?? ''],
    ),
  );
}

export class LiveView {
  private lastKey = '';
  private readonly tty = Boolean(process.stdout.isTTY);

  /** On a terminal, redraws in place; otherwise prints only when `key` (states, turns) changes. */
  show(text: string, key: string): void {
    if (this.tty) logUpdate(text);
    else if (key !== this.lastKey) process.stdout.write(`${text}\n`);
    this.lastKey = key;
  }

  done(): void {
    if (this.tty) logUpdate.done();
  }
}
