// Structured JSON logs (pino): the logger, and what one request learns on its way (route, actor, failure) for its access line.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

/**
 * One request's record, created when it arrives and filled in by whichever door answers it: the route template
 * (as the OpenAPI documents spell it), the actor, an internal error, and headers to add to the answer.
 * Passed explicitly rather than through AsyncLocalStorage, whose promise hooks would cost every request on Node 20.
 */
export interface RequestState {
  requestId: string;
  clientAddress: string;
  route?: string;
  actorId?: string;
  /** The cause of a 500, logged with the access line and never shown to the client. */
  error?: unknown;
  /** Headers the answer must carry whichever door answers (e.g. RateLimit-* at /graphql). */
  headers?: Record<string, string>;
}

/**
 * Keys whose values never reach a log line. Lines are built from chosen fields only (no request bodies or headers);
 * this is the second fence.
 */
const SECRET_KEYS = ['password', 'token', 'access_token', 'client_secret', 'secret', 'authorization', 'cookie', 'set-cookie'];

/** A logger writing one JSON object per line: `time` ISO 8601, `level` as a word. */
export function createLogger(level: LogLevel | 'silent', destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Top-level keys only: wildcard paths make pino walk every line's objects, a measurable cost on each request.
      redact: { paths: SECRET_KEYS.map((k) => (/^[a-z_]+$/.test(k) ? k : `["${k}"]`)), censor: '[redacted]' },
    },
    destination,
  );
}

/** Writes a request's access line: warn for 4xx is noise, so 5xx are errors and everything else info. */
export function logRequest(log: Logger, state: RequestState, method: string, status: number, ms: number): void {
  const line = {
    request_id: state.requestId,
    method,
    route: state.route ?? null,
    status,
    ms: Math.round(ms * 100) / 100,
    actor: state.actorId ?? null,
  };
  if (status >= 500) log.error({ ...line, err: state.error }, 'request failed');
  else log.info(line, 'request');
}
