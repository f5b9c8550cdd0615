/**
 * The Schedule spec flags `forkflow schedule create` and `forkflow dream schedule create` share,
 * and the spec they make (validated by the client's schedule spec schema).
 */

/** `--interval`, `--offset`, `--cron` (repeatable), `--jitter`, `--catchup-window`, `--paused`, `--note`. */
export interface SpecFlags {
  interval?: string;
  offset?: string;
  cron?: string[];
  jitter?: string;
  catchupWindow?: string;
  paused?: boolean;
  note?: string;
}

/** Commander's collector for a repeatable option. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The spec the flags give: only what was set. */
export function specFromFlags(flags: SpecFlags) {
  return {
    ...(flags.interval ? { every: flags.interval } : {}),
    ...(flags.offset ? { offset: flags.offset } : {}),
    ...(flags.cron ? { cron: flags.cron } : {}),
    ...(flags.jitter ? { jitter: flags.jitter } : {}),
    ...(flags.catchupWindow ? { catchupWindow: flags.catchupWindow } : {}),
    ...(flags.paused ? { paused: true } : {}),
    ...(flags.note ? { note: flags.note } : {}),
  };
}
