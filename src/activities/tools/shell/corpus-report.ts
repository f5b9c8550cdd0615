/**
 * Runs the classifier over a labelled corpus (JSONL: `{cmd, expect, category, note}`)
 * and computes the figures the acceptance criteria ask for: how many adversarial
 * commands there are and how many slipped through (must be 0), and the false-denial
 * rate on the commands labelled `allow`. Used by the unit test and by
 * `scripts/shell-corpus-report.ts`.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { classifyShellCommand } from './index';

const entrySchema = z.strictObject({
  cmd: z.string(),
  expect: z.enum(['deny', 'allow']),
  category: z.string().min(1),
  note: z.string(),
});

/** One labelled command of the corpus. */
export type CorpusEntry = z.infer<typeof entrySchema>;

/** A corpus entry the classifier got wrong. */
export interface CorpusMiss {
  /** `bypass`: labelled deny but allowed. `false-denial`: labelled allow but denied. */
  readonly kind: 'bypass' | 'false-denial';
  readonly cmd: string;
  readonly category: string;
  /** The classifier's reason, for false denials. */
  readonly reason?: string;
}

export interface CorpusReport {
  /** Commands labelled `deny`. */
  readonly adversarial: number;
  /** Of those, how many the classifier allowed. Must be 0. */
  readonly bypasses: number;
  /** Commands labelled `allow` (everyday read-only commands and harmless look-alikes). */
  readonly everyday: number;
  /** Of those, how many the classifier denied. */
  readonly falseDenials: number;
  /** `falseDenials / everyday` (0 when there are none). */
  readonly falseDenialRate: number;
  /** Every miss, bypasses first. */
  readonly list: readonly CorpusMiss[];
  /** Entry counts per category, for the report. */
  readonly categories: Readonly<Record<string, { deny: number; allow: number }>>;
}

/** Parse a JSONL corpus; throws on a malformed line (with its number). */
export function parseCorpus(text: string): CorpusEntry[] {
  const entries: CorpusEntry[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const parsed = entrySchema.safeParse(JSON.parse(line));
    if (!parsed.success) throw new Error(`corpus line ${i + 1}: ${parsed.error.message}`);
    entries.push(parsed.data);
  });
  return entries;
}

/**
 * Classify every command of the corpus at `path` and summarise.
 *
 * @example
 * const r = await corpusReport('test/data/shell-corpus.jsonl');
 * console.log(r.bypasses, (r.falseDenialRate * 100).toFixed(1) + '%');
 */
export async function corpusReport(path: string): Promise<CorpusReport> {
  const entries = parseCorpus(await readFile(path, 'utf8'));
  const bypasses: CorpusMiss[] = [];
  const falseDenials: CorpusMiss[] = [];
  const categories: Record<string, { deny: number; allow: number }> = {};
  for (const entry of entries) {
    const counts = (categories[entry.category] ??= { deny: 0, allow: 0 });
    counts[entry.expect]++;
    const verdict = await classifyShellCommand(entry.cmd);
    if (entry.expect === 'deny' && verdict.readOnly) {
      bypasses.push({ kind: 'bypass', cmd: entry.cmd, category: entry.category });
    } else if (entry.expect === 'allow' && !verdict.readOnly) {
      falseDenials.push({ kind: 'false-denial', cmd: entry.cmd, category: entry.category, reason: verdict.reason });
    }
  }
  const adversarial = entries.filter((e) => e.expect === 'deny').length;
  const everyday = entries.length - adversarial;
  return {
    adversarial,
    bypasses: bypasses.length,
    everyday,
    falseDenials: falseDenials.length,
    falseDenialRate: everyday === 0 ? 0 : falseDenials.length / everyday,
    list: [...bypasses, ...falseDenials],
    categories,
  };
}
