// Idempotency-Key at the REST doors (contract section 14): the header's check, a request's fingerprint, the headers
// worth keeping and the body of a replay. The keeping itself is the domain's (src/domain/idempotency.ts), handed to
// createRestHandler as hooks by src/app.ts: this layer never imports the domain.
import { createHash, hash, type Hash } from 'node:crypto';
import { AppError } from '../src/errors.js';
import type { Route } from './route.js';

/** An answer as kept: the status, the headers to replay (never X-Request-Id) and the JSON body's text. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyBegin =
  | { outcome: 'claimed'; finish(answer: KeptAnswer): Promise<void> }
  | { outcome: 'replay'; answer: KeptAnswer }
  | { outcome: 'running' }
  | { outcome: 'reused' };

export interface IdempotencyHooks<C> {
  /** Whether requests of `route` honour the header; asked once per route when the routes are compiled. */
  appliesTo(route: Route): boolean;
  /** Claims `key` for the caller of `ctx`; undefined when the caller has no identity to keep answers under. */
  begin(ctx: C, key: string, fingerprint: string): Promise<IdempotencyBegin> | undefined;
}

/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key, undefined without one; a malformed key is a 400. */
export function idempotencyKeyOf(request: Request): string | undefined {
  const key = request.headers.get('idempotency-key');
  if (key === null) return undefined;
  if (!KEY.test(key)) {
    const message = 'must be 1 to 255 printable ASCII characters';
    throw new AppError('BAD_REQUEST', `Idempotency-Key ${message}`, { details: [{ field: 'Idempotency-Key', message }] });
  }
  return key;
}

/**
 * Feeds a parsed body to `hash` in a canonical form: object keys sorted, so a client that serialises its retry with
 * another key order still matches; bytes (an uploaded package) as they are. The text is gathered in `out` and handed
 * to the hash in one piece (an update per value would cross into native code thousands of times for a batch).
 */
function feed(hash: Hash, value: unknown, out: string[]): void {
  if (value === undefined) out.push('u');
  else if (value === null || typeof value !== 'object') out.push(JSON.stringify(value));
  else if (value instanceof Uint8Array) {
    hash.update(out.join('')).update(`b${value.byteLength}:`).update(value);
    out.length = 0;
  } else if (Array.isArray(value)) {
    out.push('[');
    for (const item of value) {
      feed(hash, item, out);
      out.push(',');
    }
    out.push(']');
  } else {
    out.push('{');
    for (const k of Object.keys(value).sort()) {
      out.push(JSON.stringify(k), ':');
      feed(hash, (value as Record<string, unknown>)[k], out);
      out.push(',');
    }
    out.push('}');
  }
}

/**
 * `feed`'s text when the body holds no bytes (every JSON body), else undefined. Built by concatenating strings (V8 joins
 * them lazily), one call per value, since this runs on every keyed write: the same text, but it can be hashed in one
 * call, with no Hash object (which costs more than hashing a record) and no array of pieces.
 */
function canonical(value: unknown): string | undefined {
  if (value === undefined) return 'u';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof Uint8Array) return undefined;
  let text = Array.isArray(value) ? '[' : '{';
  if (Array.isArray(value)) {
    for (const item of value) {
      const inner = canonical(item);
      if (inner === undefined) return undefined;
      text = `${text}${inner},`;
    }
    return `${text}]`;
  }
  for (const k of Object.keys(value).sort()) {
    const inner = canonical((value as Record<string, unknown>)[k]);
    if (inner === undefined) return undefined;
    text = `${text}${JSON.stringify(k)}:${inner},`;
  }
  return `${text}}`;
}

/** `METHOD /path <sha-256 of the query string and the parsed body>`: what a repeat of the key must match. */
export function fingerprint(method: string, url: URL, body: unknown): string {
  const text = canonical(body);
  let digest: string;
  if (text !== undefined) digest = hash('sha256', `${url.search}\n${text}`, 'base64url');
  else {
    const h = createHash('sha256').update(url.search).update('\n');
    const out: string[] = [];
    feed(h, body, out);
    digest = h.update(out.join('')).digest('base64url');
  }
  return `${method} ${url.pathname} ${digest}`;
}

/**
 * The headers of an answer worth replaying: those the operation set (Retry-After, WWW-Authenticate, Location). Not
 * X-Request-Id (each answer has its own) nor RateLimit-* (a repeat gets its own, fresh), and not the family's fixed
 * headers (added to every answer anyway).
 */
export function keptHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!/^(x-request-id$|ratelimit)/i.test(name)) kept[name] = value;
  }
  return kept;
}

/** A kept body as the repeat answers it: with the repeat's own `request_id` where the envelope has one. */
export function replayedBody(body: string, requestId: string): string {
  if (!body.includes('"request_id"')) return body;
  const parsed = JSON.parse(body) as unknown;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || !('request_id' in parsed)) return body;
  return JSON.stringify({ ...parsed, request_id: requestId });
}
