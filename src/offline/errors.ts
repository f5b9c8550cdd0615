/**
 * Error responses of the offline model: the status → `error.type` table of the real API,
 * the error body shape, and the exception route handlers throw to reject a request.
 */

/** `error.type` per HTTP status, as the Messages API reports it. */
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/**
 * The `error.type` the real API uses for a status. Statuses outside the table fall back
 * to `api_error` (5xx) or `invalid_request_error` (anything else).
 */
export function errorTypeForStatus(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** Default messages for injected faults: say plainly that the failure is synthetic. */
export function defaultFaultMessage(status: number): string {
  switch (errorTypeForStatus(status)) {
    case 'rate_limit_error':
      return 'Rate limit exceeded (injected by the offline model).';
    case 'overloaded_error':
      return 'Overloaded (injected by the offline model).';
    case 'timeout_error':
      return 'Request timed out upstream (injected by the offline model).';
    case 'request_too_large':
      return 'Request exceeds the maximum allowed size (injected by the offline model).';
    default:
      return `HTTP ${status} (injected by the offline model).`;
  }
}

/** The JSON error body: `{"type":"error","error":{"type","message"},"request_id"}`. */
export interface ErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id: string;
}

export function errorBody(type: string, message: string, requestId: string): ErrorBody {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

/**
 * Thrown by route handlers to answer with an API error. `outcome` says how the request
 * log records it: `rejected` for a request the real API would refuse, `fault` for an
 * injected failure.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly type: string;

  constructor(
    readonly status: number,
    message: string,
    readonly options: { headers?: Record<string, string>; outcome?: 'rejected' | 'fault'; type?: string } = {},
  ) {
    super(message);
    this.type = options.type ?? errorTypeForStatus(status);
  }
}

/** Shorthand for the most common rejection: 400 `invalid_request_error`. */
export function invalidRequest(message: string): ApiError {
  return new ApiError(400, message);
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
