/**
 * Context windows: how many input tokens a request to each model may hold, and how the larger
 * (1M-token) window is asked for. Pure and workflow-safe; the offline model enforces the same
 * table (src/offline/limits.ts), so a request forkflow plans against a window is refused
 * offline exactly where the real API would refuse it.
 *
 * The standard window of every current Claude model is 200,000 tokens. Some models take a
 * 1,000,000-token window when the request carries the beta header `context-1m-2025-08-07`
 * (without it they run at 200K). Which ones: Sonnet 4, 4.5 and 4.6, Opus 4.6 and later
 * (documented); the 5.x Sonnet and Opus lines are assumed to keep it. Haiku has none. A model
 * this table does not know gets the standard window; a fork's `contextWindow` overrides it.
 */

/** The beta header that asks for a model's 1M-token window. */
export const CONTEXT_1M_BETA = 'context-1m-2025-08-07';

/** The window of a model without the 1M beta, and the most any model takes with it. */
export const STANDARD_WINDOW = 200_000;
export const EXTENDED_WINDOW = 1_000_000;

/** A model's windows: `standard` always, `extended` when the 1M beta applies to it. */
export interface ModelWindow {
  standard: number;
  extended?: number;
}

/** Patterns in order: the first that matches a model id decides. */
const TABLE: { pattern: RegExp; window: ModelWindow }[] = [
  { pattern: /haiku/, window: { standard: STANDARD_WINDOW } },
  { pattern: /sonnet-4(?:-[56])?(?:-\d{8})?$|sonnet-4-20/, window: { standard: STANDARD_WINDOW, extended: EXTENDED_WINDOW } },
  { pattern: /opus-4-[5](?:-\d{8})?$/, window: { standard: STANDARD_WINDOW } },
  { pattern: /opus-4-[6-9]|opus-5|sonnet-5|mythos/, window: { standard: STANDARD_WINDOW, extended: EXTENDED_WINDOW } },
];

/** The windows of `model` (a model this table does not know: the standard window, no 1M). */
export function modelWindow(model: string): ModelWindow {
  const id = model.toLowerCase();
  return TABLE.find((row) => row.pattern.test(id))?.window ?? { standard: STANDARD_WINDOW };
}

/** The window a request is planned against, and the beta headers that open it. */
export interface ResolvedWindow {
  tokens: number;
  /** `[CONTEXT_1M_BETA]` when the window is above the model's standard one. */
  betas: string[];
}

/** Why an override cannot be had on this model, or undefined. */
export function windowRefusal(model: string, override: number): string | undefined {
  const w = modelWindow(model);
  const most = w.extended ?? w.standard;
  if (override <= most) return undefined;
  return w.extended
    ? `contextWindow ${override} is more than ${model} takes: ${w.standard} tokens, or ${w.extended} with the ${CONTEXT_1M_BETA} beta.`
    : `contextWindow ${override} is more than ${model} takes: ${w.standard} tokens (it has no 1M-token window).`;
}

/**
 * The window for `model`, or for a fork's override: at most the standard window is planned
 * against as it is (forkflow keeps requests under it); above it the request carries the 1M
 * beta header, which the model must support (check with {@link windowRefusal} first: an
 * override the model cannot have is clamped to its largest window here).
 *
 * @example resolveWindow('claude-sonnet-4-6', 1_000_000) // { tokens: 1000000, betas: ['context-1m-2025-08-07'] }
 */
export function resolveWindow(model: string, override?: number): ResolvedWindow {
  const w = modelWindow(model);
  if (override === undefined) return { tokens: w.standard, betas: [] };
  const tokens = Math.min(override, w.extended ?? w.standard);
  return { tokens, betas: tokens > w.standard ? [CONTEXT_1M_BETA] : [] };
}

/** The window the API grants a request for `model` with these beta headers (what the offline model enforces). */
export function grantedWindow(model: string, betas: readonly string[]): number {
  const w = modelWindow(model);
  return w.extended && betas.includes(CONTEXT_1M_BETA) ? w.extended : w.standard;
}

/** The API's words for a prompt over the window (400 `invalid_request_error`). */
export function promptTooLongMessage(tokens: number, window: number): string {
  return `prompt is too long: ${tokens} tokens > ${window} maximum`;
}

/** Reads `prompt is too long: N tokens > M maximum` back (the provider's message, or forkflow's pre-flight). */
export function parsePromptTooLong(message: string): { tokens: number; window: number } | undefined {
  const m = /prompt is too long: (\d+) tokens > (\d+) maximum/.exec(message);
  return m ? { tokens: Number(m[1]), window: Number(m[2]) } : undefined;
}
