/**
 * Header checks every API route makes: authentication (0.x SDKs send `x-api-key`, 1.x
 * SDKs `Authorization: Bearer`) and the `anthropic-version` the client speaks.
 */
import { ApiError, invalidRequest } from '../errors';
import { type ApiVersion, SUPPORTED_VERSIONS } from './validation';

type Headers = Readonly<Record<string, string>>;

/**
 * Throws 401 `authentication_error` unless a key is presented, and, when `expected` is
 * set, unless one of the presented keys is exactly it.
 */
export function checkAuth(headers: Headers, expected: string | undefined): void {
  const bearer = /^Bearer\s+(\S.*)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
  const presented = [headers['x-api-key'], bearer].filter((k): k is string => !!k);
  if (presented.length === 0) {
    throw new ApiError(401, 'Missing API key: send "x-api-key: <key>" or "Authorization: Bearer <key>".');
  }
  if (expected !== undefined && !presented.includes(expected)) {
    throw new ApiError(401, 'Invalid API key: this offline model was started with a different apiKey.');
  }
}

/** The request's `anthropic-version`; throws 400 when it is missing or unknown. */
export function checkVersion(headers: Headers): ApiVersion {
  const v = headers['anthropic-version'];
  const supported = SUPPORTED_VERSIONS.join(', ');
  if (!v) throw invalidRequest(`anthropic-version: header is required (supported: ${supported}).`);
  if (!(SUPPORTED_VERSIONS as readonly string[]).includes(v)) {
    throw invalidRequest(`anthropic-version: "${v}" is not a supported version (supported: ${supported}).`);
  }
  return v as ApiVersion;
}
