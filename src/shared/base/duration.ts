/** Durations at the boundary: a number of milliseconds or a string like `90s`, `5m`, `1h`. */
import { z } from 'zod';
import { schemaOnce } from './schema-once';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export const durationSchema = schemaOnce('base/duration#durationSchema', () => z.union([
  z.number().int().positive(),
  z.string().regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, 'a duration like 500ms, 90s, 5m, 1h or 2d'),
]));
export type Duration = z.infer<typeof durationSchema>;

export function toMs(d: Duration): number {
  if (typeof d === 'number') return d;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(d);
  if (!match) throw new TypeError(`not a duration: ${d}`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}
