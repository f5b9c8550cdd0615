/**
 * The emulator's admin route, for tests that run it in another process: `GET /_offline/clock`
 * reads the emulated clock, `POST /_offline/clock` with `{"advanceMs": n}` moves it forward.
 * Off unless the model was started with `admin: true` (then it answers 404 like any unknown
 * path): a real API has no such door, and a demo or long-running emulator should not either.
 */
import { z } from 'zod';
import type { OfflineClock } from '../clock';
import { invalidRequest } from '../errors';
import type { PlannedReply } from '../reply';

export const ADMIN_CLOCK_PATH = '/_offline/clock';

/** At most a year per call: enough for any TTL, and no float overflow games. */
const advanceSchema = z.strictObject({ advanceMs: z.number().int().min(0).max(366 * 24 * 3_600_000) });
export type ClockAdvance = z.infer<typeof advanceSchema>;

export interface ClockReading {
  now: number;
  scale: number;
}

/** Answers the clock route: a reading, after the advance a POST asks for. Throws a 400 for a bad body. */
export function planClock(method: string, body: unknown, clock: OfflineClock): PlannedReply {
  if (method === 'POST') {
    const parsed = advanceSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalidRequest(`${[...(issue?.path ?? []).map(String)].join('.') || '(body)'}: ${issue?.message ?? 'Invalid input'} (expected {"advanceMs": <integer ms ≥ 0>})`);
    }
    clock.advance(parsed.data.advanceMs);
  }
  const reading: ClockReading = { now: clock.now(), scale: clock.scale };
  return { reply: { kind: 'json', body: reading }, delayMs: 0 };
}
