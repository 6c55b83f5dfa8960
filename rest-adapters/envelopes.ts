// The v1 envelope family (contract section 1): success and error bodies, and the JSON response helper.
import type { ErrorDetail } from '../src/errors.js';

export function json(status: number, body: unknown, requestId: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
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
