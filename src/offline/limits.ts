/**
 * The context window the offline model grants a request, and the error the real API gives
 * past it: 400 `invalid_request_error`, `prompt is too long: N tokens > M maximum`. The window
 * is the model's (src/shared/context/windows.ts: 200K, or 1M with the `context-1m-2025-08-07`
 * beta on the models that have one) unless the server was started with its own.
 */
import { grantedWindow, promptTooLongMessage } from '../shared/context/windows';
import { invalidRequest, type ApiError } from './errors';

/** A window option: the same for every model, or per model and beta headers. */
export type WindowOption = number | ((model: string, betas: readonly string[]) => number);

/** The window of one request. */
export function windowFor(option: WindowOption | undefined, model: string, betas: readonly string[]): number {
  if (option === undefined) return grantedWindow(model, betas);
  return typeof option === 'number' ? option : option(model, betas);
}

/** The `anthropic-beta` header as a list (comma-separated, as the SDK joins `betas`). */
export function betasOf(headers: Readonly<Record<string, string>>): string[] {
  return (headers['anthropic-beta'] ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
}

/** The API's refusal of a prompt over its window. */
export function promptTooLong(tokens: number, window: number): ApiError {
  return invalidRequest(promptTooLongMessage(tokens, window));
}
