// The envelope families of contract section 1 (v1, open, the RFC 6749 token shape, raw JSON) and the JSON response helper.
// Answers are built with @whatwg-node/fetch's Response, the one the server adapter (src/main.ts) knows: it writes a
// string body to the socket as it is, where the global Response's body is read back through a web stream (about 50 µs
// of CPU per 30 kB answer).
import { Response } from '@whatwg-node/fetch';
import type { ErrorCode, ErrorDetail } from '../src/errors.js';
import type { EnvelopeFamily } from './adapter.js';
import type { Family } from './route.js';

export function json(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, ...headers },
  });
}

/** `json` for a body already serialised (an answer kept for Idempotency-Key). */
export function jsonText(status: number, text: string, requestId: string, headers: Record<string, string> = {}): Response {
  return new Response(text, {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, ...headers },
  });
}

export function v1Success(data: unknown) {
  return { code: 0, msg: 'success', data };
}

export function v1Error(status: number, code: string, message: string, requestId: string, details?: ErrorDetail[]) {
  return { code: status, msg: message, error: code, data: null, request_id: requestId, ...(details?.length ? { details } : {}) };
}

/** The open family's error codes: lower-case, `rate_limit` for 429, `unprocessable_entity` for a reused Idempotency-Key. */
const OPEN_CODES: Partial<Record<ErrorCode, string>> = {
  BAD_REQUEST: 'bad_request', UNAUTHORIZED: 'unauthorized', FORBIDDEN: 'forbidden', NOT_FOUND: 'not_found',
  METHOD_NOT_ALLOWED: 'method_not_allowed', CONFLICT: 'conflict', PAYLOAD_TOO_LARGE: 'payload_too_large',
  RATE_LIMITED: 'rate_limit', INTERNAL_ERROR: 'internal_error', IDEMPOTENCY_KEY_REUSED: 'unprocessable_entity',
};
const openCode = (code: ErrorCode, status: number) => OPEN_CODES[code] ?? (status >= 500 ? 'internal_error' : status === 401 ? 'unauthorized' : 'bad_request');

const openFamily: EnvelopeFamily = {
  success(data, route, requestId) {
    if (route.paginated) {
      const page = data as { data: unknown; pagination: unknown };
      return { code: 0, message: 'success', data: page.data, pagination: page.pagination, request_id: requestId };
    }
    return { code: 0, message: 'success', data, request_id: requestId };
  },
  error: (status, code, message, requestId) => ({ code: status, message, error: openCode(code, status), request_id: requestId }),
};

const OAUTH_CODES = new Set<ErrorCode>(['invalid_request', 'invalid_client', 'unsupported_grant_type', 'invalid_scope']);

/** RFC 6749 section 5: the token endpoint answers the token itself, or `{error, error_description}`; never cached. */
const tokenFamily: EnvelopeFamily = {
  success: (data) => data,
  error: (status, code, message, requestId) => ({
    error: OAUTH_CODES.has(code) ? code : status >= 500 ? 'server_error' : status === 401 ? 'invalid_client' : 'invalid_request',
    error_description: message,
    request_id: requestId,
  }),
  headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
};

const v1Family: EnvelopeFamily = {
  success: (data) => v1Success(data),
  error: (status, code, message, requestId, details) => v1Error(status, code, message, requestId, details),
};

export const families: Record<Family, EnvelopeFamily> = {
  v1: v1Family,
  open: openFamily,
  token: tokenFamily,
  raw: { success: (data) => data, error: openFamily.error },
};
