// The one application error type and the one list of error codes, shared by GraphQL and every REST family.
import { GraphQLError } from 'graphql';

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  // Idempotency-Key reused for another method, path or body (contract section 14).
  | 'IDEMPOTENCY_KEY_REUSED'
  // Plugin platform (contract section 7).
  | 'INVALID_PACKAGE'
  | 'VERSION_NOT_HIGHER'
  | 'INVALID_CONFIG'
  | 'PERMISSION_DENIED'
  | 'SSRF_BLOCKED'
  | 'PLUGIN_DISABLED'
  | 'METHOD_NOT_FOUND'
  | 'ENDPOINT_NOT_DECLARED'
  | 'INVALID_PARAMS'
  | 'TIMEOUT'
  | 'UPSTREAM_TIMEOUT'
  | 'RESPONSE_TOO_LARGE'
  | 'ENDPOINT_FAILED'
  // OAuth 2.0 token endpoint errors, spelled as RFC 6749 spells them.
  | 'invalid_request'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'invalid_scope';

export const STATUS_OF: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  IDEMPOTENCY_KEY_REUSED: 422,
  INVALID_PACKAGE: 400,
  VERSION_NOT_HIGHER: 409,
  INVALID_CONFIG: 400,
  PERMISSION_DENIED: 403,
  SSRF_BLOCKED: 403,
  PLUGIN_DISABLED: 403,
  METHOD_NOT_FOUND: 404,
  ENDPOINT_NOT_DECLARED: 404,
  INVALID_PARAMS: 400,
  TIMEOUT: 504,
  UPSTREAM_TIMEOUT: 504,
  RESPONSE_TOO_LARGE: 502,
  ENDPOINT_FAILED: 502,
  invalid_request: 400,
  invalid_client: 401,
  unsupported_grant_type: 400,
  invalid_scope: 403,
};

export interface ErrorDetail {
  index?: number;
  field?: string;
  /** Where in an uploaded package (manifest pointer or archive entry). */
  path?: string;
  message: string;
}

/** A GraphQLError whose extensions carry the code, the HTTP status and optional details. */
export class AppError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    const status = STATUS_OF[code];
    super(message, {
      extensions: {
        code,
        http: { status, ...(opts.headers ? { headers: opts.headers } : {}) },
        ...(opts.details ? { details: opts.details } : {}),
      },
    });
    this.code = code;
    this.status = status;
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) => new AppError('BAD_REQUEST', message, { details });
/** A 400 naming the field (or place) that is wrong: `<field>: <message>`, with the same detail. */
export const invalidField = (field: string, message: string) => badRequest(`${field}: ${message}`, [{ field, message }]);
export const notFound = (message: string, details?: ErrorDetail[]) => new AppError('NOT_FOUND', message, { details });
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const forbidden = (message = 'You do not have permission to do this') => new AppError('FORBIDDEN', message);
export const unauthorized = (message = 'Authentication required') => new AppError('UNAUTHORIZED', message);
