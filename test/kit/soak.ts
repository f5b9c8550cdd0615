/**
 * Soak sizes: the long versions of the longest tests run with `npm run bench:soak`
 * (FORKFLOW_SOAK=1); `npm test` runs the same tests, with the same assertions, at a smoke size
 * that keeps the suite's whole run within its time budget.
 */
export const SOAK = process.env.FORKFLOW_SOAK === '1';

/** `smoke` in `npm test`, `soak` under `npm run bench:soak`. */
export function soakOr<T>(smoke: T, soak: T): T {
  return SOAK ? soak : smoke;
}
