// The REST adapter: matches a route, checks the request, runs the route's GraphQL operation in process
// and maps the answer or the error onto the family's envelope.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse, validate, GraphQLError, type DocumentNode, type GraphQLSchema } from 'graphql';
import { AppError, type ErrorCode, type ErrorDetail } from '../src/errors.js';
import { compileOperation, definedOnly, executeOperation, type CompiledOperation } from '../schema/run-operation.js';
import { json, jsonText } from './envelopes.js';
import { fingerprint, idempotencyKeyOf, keptHeaders, replayedBody, type IdempotencyBegin, type IdempotencyHooks, type KeptAnswer } from './idempotency.js';
import { MAX_UPLOAD_BYTES } from '../src/limits.js';
import type { RequestState } from '../src/log.js';
import type { Family, Route, RouteRequest, SpoolName } from './route.js';
import type { Spool } from './spool.js';

export const MAX_JSON_BYTES = 10 * 1024 * 1024;

export interface Outcome {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A streamed answer (a download) given as it is. */
  response?: Response;
}

/** Builds a family's success and error bodies (see envelopes.ts). */
export interface EnvelopeFamily {
  success(data: unknown, route: Route, requestId: string): unknown;
  error(status: number, code: ErrorCode, message: string, requestId: string, details?: ErrorDetail[]): unknown;
  /** Headers on every answer of the family. */
  headers?: Record<string, string>;
}

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  paramNames: string[];
  document: DocumentNode;
  /** The document compiled to JavaScript once (graphql-jit): no per-request walk of the document or argument coercion. */
  operation: CompiledOperation;
  checkBody?: ValidateFunction;
  /** Whether the route honours Idempotency-Key (RestHandlerOptions.idempotency). */
  idempotent: boolean;
}

/** Parses and validates every route's GraphQL document against the schema; throws naming the route that broke. */
export function compileRoutes(schema: GraphQLSchema, routes: Route[], idempotent: (route: Route) => boolean = () => false): CompiledRoute[] {
  const ajv = new Ajv2020({ allErrors: false, strict: false });
  return routes.map((route) => {
    const document = parse(route.document);
    const errors = validate(schema, document);
    if (errors.length) throw new Error(`Route ${route.method} ${route.path}: ${errors.map((e) => e.message).join('; ')}`);
    const paramNames: string[] = [];
    const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, name: string) => {
      paramNames.push(name);
      return '([^/]+)';
    });
    const operation = compileOperation(schema, document);
    if (!operation.compiled) throw new Error(`Route ${route.method} ${route.path}: graphql-jit cannot compile its document`);
    return {
      route, pattern: new RegExp(`^${source}$`), paramNames, document, operation, checkBody: route.body ? ajv.compile(route.body) : undefined,
      idempotent: idempotent(route),
    };
  });
}

function describeAjvError(e: ErrorObject): { field: string; message: string } {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    const field = path ? `${path}.${extra}` : extra;
    return { field, message: `unknown property "${field}"` };
  }
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    const field = path ? `${path}.${missing}` : missing;
    return { field, message: `"${field}" is required` };
  }
  const field = path || 'body';
  return { field, message: `"${field}" ${e.message}` };
}

/** A request's body, read no further than `limit` bytes (a 413 past it, or when Content-Length says more); undefined when empty. */
export async function readBytes(request: Request, limit: number) {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > limit) throw new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${limit} bytes`);
  if (!request.body) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new AppError('PAYLOAD_TOO_LARGE', `The body is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return size ? Buffer.concat(chunks) : undefined;
}

/** Reads a JSON (or, for `form`, URL-encoded) body up to the limit, counting real bytes rather than trusting Content-Length. */
export async function readBody(request: Request, format: 'json' | 'form' | 'upload' = 'json', limit = format === 'upload' ? MAX_UPLOAD_BYTES : MAX_JSON_BYTES): Promise<unknown> {
  const bytes = await readBytes(request, limit);
  if (!bytes) return undefined;
  const contentType = request.headers.get('content-type') ?? '';
  if (format === 'upload') {
    if (!/multipart\/form-data/i.test(contentType)) return { file: bytes };
    let form: FormData;
    try {
      form = await new Response(bytes, { headers: { 'content-type': contentType } }).formData();
    } catch {
      throw new AppError('BAD_REQUEST', 'Malformed multipart body');
    }
    const file = form.get('file');
    if (!file || typeof file === 'string') throw new AppError('BAD_REQUEST', 'The multipart body needs a "file" part holding the package', { details: [{ field: 'file', message: 'required' }] });
    return { file: Buffer.from(await file.arrayBuffer()) };
  }
  const text = bytes.toString('utf8');
  if (format === 'form' && /application\/x-www-form-urlencoded/i.test(contentType)) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new AppError('BAD_REQUEST', `Malformed JSON body: ${(e as Error).message}`);
  }
}

/**
 * The error an operation failed with, as code, status, message and details; unexpected errors become a bare 500
 * whose cause is kept in `cause` for the log, never for the client.
 */
export function classifyError(error: unknown): { code: ErrorCode; status: number; message: string; details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (original instanceof AppError) return { code: original.code, status: original.status, message: original.message, details: original.details, headers: original.headers };
  if (error instanceof GraphQLError && (!error.originalError || !error.path)) {
    // Validation or variable coercion (no resolver path): the request was wrong.
    return { code: 'BAD_REQUEST', status: 400, message: error.message };
  }
  return { code: 'INTERNAL_ERROR', status: 500, message: 'Internal error', cause: original };
}

export interface RestHandlerOptions<C> {
  schema: GraphQLSchema;
  routes: Route[];
  families: Record<Family, EnvelopeFamily>;
  /** Builds the GraphQL context of a request (who is calling); may throw an AppError such as a 401. */
  context: (request: Request, state: RequestState, route: Route) => Promise<C>;
  /**
   * Checks that run before the body is read (rate limits, who may upload 50 MiB); the headers it returns go on the
   * answer, and an AppError it throws (or rejects with) is the answer.
   */
  beforeBody?: (route: Route, document: DocumentNode, ctx: C, params: Record<string, string>) => Record<string, string> | void | Promise<Record<string, string> | void>;
  /** Streams `spool` bodies into files, by the route's `spoolInto`; a route whose spool is absent answers 400. */
  spools?: Partial<Record<SpoolName, Spool>>;
  /** Answers a `download` route: the file its operation's plan names, streamed. */
  download?: (ctx: C, plan: unknown) => Response;
  /**
   * Idempotency-Key (contract section 14) on the routes `appliesTo` picks: the key is claimed once the body is read
   * (the fingerprint needs it), so answers given before that (401, 403 before the body, 429, 413, malformed JSON) are
   * never kept. Without it the header is ignored.
   */
  idempotency?: IdempotencyHooks<C>;
}

/** What one request carries through `run`: the headers of its answer so far, and its claim of an Idempotency-Key. */
interface Job {
  headers: Record<string, string>;
  key?: string;
  claim?: Extract<IdempotencyBegin, { outcome: 'claimed' }>;
  /** The kept answer to the key's first request, when this is a repeat. */
  replay?: KeptAnswer;
}

export function createRestHandler<C>(opts: RestHandlerOptions<C>) {
  const idempotency = opts.idempotency;
  const compiled = compileRoutes(opts.schema, opts.routes, idempotency && ((route) => idempotency.appliesTo(route)));

  function match(method: string, pathname: string) {
    let pathMatched = false;
    const allowed: string[] = [];
    for (const c of compiled) {
      const m = c.pattern.exec(pathname);
      if (!m) continue;
      pathMatched = true;
      allowed.push(c.route.method);
      if (c.route.method === method) {
        const params: Record<string, string> = {};
        try {
          c.paramNames.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1])));
        } catch {
          return { pathMatched: false, allowed }; // a malformed %-escape names nothing
        }
        return { compiled: c, params };
      }
    }
    return { pathMatched, allowed };
  }

  function parseQuery(route: Route, url: URL): RouteRequest['query'] {
    const query: RouteRequest['query'] = {};
    for (const [name, spec] of Object.entries(route.query ?? {})) {
      const raw = url.searchParams.get(name);
      if (raw === null) {
        if (spec.required) throw new AppError('BAD_REQUEST', `${name} is required`, { details: [{ field: name, message: 'required' }] });
        continue;
      }
      if (spec.type === 'integer') {
        if (!/^\s*-?\d+\s*$/.test(raw)) {
          throw new AppError('BAD_REQUEST', `${name} must be a positive integer`, { details: [{ field: name, message: 'must be a positive integer' }] });
        }
        // GraphQL Int is 32-bit; anything larger is past every page anyway (page sizes are clamped further down).
        query[name] = Math.max(Math.min(Number(raw), 2 ** 31 - 1), -1);
      } else query[name] = raw;
    }
    return query;
  }

  /**
   * Claims the job's key (false: run the request), or answers for it: true with the kept answer in `job.replay`, or a
   * 409 / 422 thrown, which is never kept.
   */
  async function claimKey(job: Job, ctx: C, method: string, url: URL, body: unknown): Promise<boolean> {
    const begun = await idempotency!.begin(ctx, job.key!, fingerprint(method, url, body));
    if (!begun) return false;
    if (begun.outcome === 'replay') {
      job.replay = begun.answer;
      return true;
    }
    if (begun.outcome === 'claimed') job.claim = begun;
    else if (begun.outcome === 'running') {
      throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still running; retry once it has answered', { headers: { 'retry-after': '1' } });
    } else throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with another method, path or body');
    return false;
  }

  async function run(c: CompiledRoute, request: Request, url: URL, params: Record<string, string>, state: RequestState, job: Job): Promise<Outcome | undefined> {
    const { route } = c;
    const family = opts.families[route.family];
    const ctx = await opts.context(request, state, route);
    // Awaited only when it is a promise (an application's rate-limit charge): other routes go on without a pause.
    const before = opts.beforeBody?.(route, c.document, ctx, params);
    Object.assign(job.headers, before instanceof Promise ? await before : before);
    const query = parseQuery(route, url);
    let body: unknown;
    if (route.bodyFormat === 'spool') return runSpooled(c, request, url, params, state, job, ctx);
    if (route.method === 'POST' || route.method === 'PUT') {
      body = await readBody(request, route.bodyFormat);
      if (job.key !== undefined && (await claimKey(job, ctx, route.method, url, body))) return undefined;
      if (route.body) {
        if (body === undefined) body = {};
        if (!c.checkBody!(body)) {
          const d = describeAjvError(c.checkBody!.errors![0]);
          throw new AppError('BAD_REQUEST', d.message, { details: [d] });
        }
      }
    } else if (job.key !== undefined && (await claimKey(job, ctx, route.method, url, undefined))) return undefined;
    // An absent key stays absent, at every depth (definedOnly).
    const variables = definedOnly(route.variables({ params, query, body: body ?? {}, headers: request.headers }));
    const result = await executeOperation(c.operation, ctx, variables);
    if (result.errors?.length) throw result.errors[0];
    if (route.download) return { status: 200, body: null, response: opts.download!(ctx, route.result(result.data)) };
    return { status: route.status ?? 200, body: family.success(route.result(result.data), route, state.requestId) };
  }

  /**
   * An upload streamed into a file (imports): the operation gets the file's id; a refused request, or a repeat of an
   * Idempotency-Key, leaves no file behind. The key compares the file by its bytes (hash), with the options part.
   */
  async function runSpooled(c: CompiledRoute, request: Request, url: URL, params: Record<string, string>, state: RequestState, job: Job, ctx: C): Promise<Outcome | undefined> {
    const spool = opts.spools?.[c.route.spoolInto ?? 'imports'];
    if (!spool) throw new AppError('BAD_REQUEST', 'Uploads are not available here');
    const spooled = await spool.write(request);
    try {
      const fingerprinted = { file_sha256: spooled.sha256, file_name: spooled.fileName, options: spooled.options ?? null };
      if (job.key !== undefined && (await claimKey(job, ctx, c.route.method, url, fingerprinted))) {
        spool.discard(spooled.upload);
        return undefined;
      }
      const variables = definedOnly(c.route.variables({ params, query: parseQuery(c.route, url), body: spooled, headers: request.headers }));
      const result = await executeOperation(c.operation, ctx, variables);
      if (result.errors?.length) throw result.errors[0];
      return { status: c.route.status ?? 200, body: opts.families[c.route.family].success(c.route.result(result.data), c.route, state.requestId) };
    } catch (e) {
      spool.discard(spooled.upload);
      throw e;
    }
  }

  return {
    compiled,
    /** Handles a request under a family's prefix; `family` picks the envelope of 404 and 405 answers. */
    async handle(request: Request, url: URL, state: RequestState, family: Family): Promise<Response> {
      const { requestId } = state;
      const found = match(request.method, url.pathname);
      const envelope = opts.families[family];
      if (!('compiled' in found) || !found.compiled) {
        if (found.pathMatched) {
          return json(405, envelope.error(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${url.pathname}`, requestId), requestId, { allow: found.allowed.join(', ') });
        }
        return json(404, envelope.error(404, 'NOT_FOUND', `No route ${request.method} ${url.pathname}`, requestId), requestId);
      }
      const routeFamily = opts.families[found.compiled.route.family];
      state.route = found.compiled.route.path;
      const job: Job = { headers: { ...routeFamily.headers } };
      let answer: Outcome;
      try {
        if (found.compiled.idempotent) job.key = idempotencyKeyOf(request);
        const outcome = await run(found.compiled, request, url, found.params, state, job);
        if (!outcome) {
          const { status, headers, body } = job.replay!;
          return jsonText(status, replayedBody(body, requestId), requestId, { ...job.headers, ...headers, 'idempotent-replayed': 'true' });
        }
        if (outcome.response) {
          for (const [k, v] of Object.entries(job.headers)) outcome.response.headers.set(k, v);
          return outcome.response;
        }
        if (!job.claim) return json(outcome.status, outcome.body, requestId, { ...job.headers, ...outcome.headers });
        answer = outcome;
      } catch (error) {
        const e = classifyError(error);
        if (e.cause) state.error = e.cause;
        answer = { status: e.status, body: routeFamily.error(e.status, e.code, e.message, requestId, e.details), headers: e.headers };
        if (!job.claim) return json(answer.status, answer.body, requestId, { ...job.headers, ...answer.headers });
      }
      // The key was claimed: keep the answer (a 5xx drops the claim) before giving it, so a retry finds it.
      const text = JSON.stringify(answer.body);
      await job.claim!.finish({ status: answer.status, headers: keptHeaders(answer.headers), body: text })
        .catch((e) => console.error(`keeping the answer of Idempotency-Key request ${requestId} failed:`, e));
      return jsonText(answer.status, text, requestId, { ...job.headers, ...answer.headers });
    },
  };
}
