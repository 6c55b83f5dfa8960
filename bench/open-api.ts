// Issue 3 workloads over HTTP: T1 the OAuth token endpoint, T2 the Open API record list, T4 keyword search.
// Each is measured on the service and on bench/baseline-server.ts in alternating slices, after checking that both
// answer the same thing.
import { isDeepStrictEqual } from 'node:util';
import { COMMON_SHARE, COMMON_WORD, RARE_RECORDS, RARE_WORD } from './data.js';
import { alternate, log, sameAnswer, timed, warm } from './harness.js';
import { makeTarget, send, sendJson, type Req, type Target } from './http-load.js';
import { fmt, type Row } from './report.js';

/** Every scope of src/domain/apps.ts SCOPES (copied, not imported: the bench talks to the service over HTTP). */
export const ALL_SCOPES = ['base:read', 'table:read', 'field:read', 'record:read', 'record:write', 'table:write'];

export interface OpenCtx {
  /** The service with the administrator's bearer token. */
  svc: Target;
  svcUrl: string;
  servicePid?: number;
  base: Target;
  baseUrl: string;
  baselinePid?: number;
  connections: number;
  rows: Row[];
  problems: string[];
}

export interface BenchApp {
  id: string;
  clientId: string;
  clientSecret: string;
}

/** Registers the bench's application with every scope, the bench base allowed and the rate limits lifted. */
export async function createBenchApp(svc: Target, baseId: string): Promise<BenchApp> {
  const res = await sendJson(svc, {
    method: 'POST', path: '/api/oauth/apps', body: JSON.stringify({
      app_name: 'bench', callback_url: 'https://example.com/cb', scopes: ALL_SCOPES, allowed_bases: [baseId],
      rate_limit_per_minute: 1_000_000, write_rate_limit_per_minute: 1_000_000,
    }),
  });
  return { id: res.data.id, clientId: res.data.client_id, clientSecret: res.data.client_secret };
}

/** The token request of RFC 6749 4.4 with client_secret_basic (credentials form-urlencoded, then base64). */
export function tokenRequest(app: BenchApp): Req {
  const basic = Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret)}`).toString('base64');
  return {
    method: 'POST', path: '/api/oauth/token', body: 'grant_type=client_credentials',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
  };
}

export async function issueToken(t: Target, app: BenchApp): Promise<string> {
  const res = await sendJson(t, tokenRequest(app));
  return res.access_token as string;
}

/** T1: tokens per second from POST /api/oauth/token, 16 connections, against the baseline doing the same work. */
export async function tokenEndpoint(ctx: OpenCtx, app: BenchApp, seconds: number) {
  log(`T1. token endpoint, client_credentials with HTTP Basic, ${ctx.connections} connections…`);
  // No default Authorization: each request carries its Basic credentials.
  const svc = makeTarget('service', ctx.svcUrl, {}, ctx.connections, ctx.servicePid);
  const base = makeTarget('baseline', ctx.baseUrl, {}, ctx.connections, ctx.baselinePid);
  const r = tokenRequest(app);
  const next = (): Req => r;
  const shape = (x: any) => ({ type: x.token_type, expires: x.expires_in, scope: x.scope, jwt: typeof x.access_token === 'string' && x.access_token.split('.').length === 3 });
  const [a, b] = await Promise.all([sendJson(svc, r), sendJson(base, r)]);
  if (!isDeepStrictEqual(shape(a), shape(b))) {
    ctx.problems.push(`T1: baseline token answer differs: service ${JSON.stringify(shape(a))} baseline ${JSON.stringify(shape(b))}`);
  }
  await warm(svc, next, 300, ctx.connections);
  await warm(base, next, 300, ctx.connections);
  const m = await alternate({ t: svc, next, label: 'T1. token endpoint' }, { t: base, next }, { concurrency: ctx.connections, seconds, maxRequests: 1_000_000 });
  ctx.rows.push({
    id: 'T1', workload: `POST /api/oauth/token client_credentials (Basic), ${ctx.connections} conns`, unit: 'tok/s',
    service: m.a.rps, baseline: m.b.rps, ratio: m.a.rps / m.b.rps, target: '>= 1,000 tok/s', pass: m.a.rps >= 1000,
    details: { service: m.a, baseline: m.b },
  });
}

const openBase = (baseId: string, tableId: string) => `/api/open/v1/bases/${baseId}/tables/${tableId}/records`;
/** The parts of an Open API page that must agree (the request id differs by design). */
const openParts = (x: any) => ({ code: x.code, message: x.message, data: x.data, pagination: x.pagination });

/** T2 (PGT2 on PostgreSQL): Open API record pages, per_page=100, on the list table, against the baseline serving the same SQL. */
export async function openList(ctx: Omit<OpenCtx, 'baseUrl'>, token: string, baseId: string, tableId: string, pages: number, records: number, seconds: number, id = 'T2') {
  log(`${id}. Open API list per_page=100, pages 1..${pages}, ${ctx.connections} connections…`);
  const svc = makeTarget('service', ctx.svcUrl, { authorization: `Bearer ${token}` }, ctx.connections, ctx.servicePid);
  const next = (i: number): Req => ({ method: 'GET', path: `${openBase(baseId, tableId)}?per_page=100&page=${1 + (i % pages)}` });
  for (const p of [1, pages]) await sameAnswer(svc, ctx.base, next(p - 1), `Open API list page ${p}`, ctx.problems, openParts);
  await warm(svc, next, 300, ctx.connections);
  await warm(ctx.base, next, 300, ctx.connections);
  const m = await alternate({ t: svc, next, label: `${id}. Open API list` }, { t: ctx.base, next }, { concurrency: ctx.connections, seconds, maxRequests: 1_000_000 });
  const ratio = m.a.rps / m.b.rps;
  ctx.rows.push({
    id, workload: `${id === 'T2' ? '' : 'PG '}Open API list per_page=100, ${records.toLocaleString('en-US')} rec, ${ctx.connections} conns`, unit: 'req/s',
    service: m.a.rps, baseline: m.b.rps, ratio, target: '>= 0.50x baseline', pass: ratio >= 0.5, details: { service: m.a, baseline: m.b },
  });
}

/**
 * T4: keyword search on the 1M-record table, per_page=20 with the total, one request at a time: a rare term and a
 * common one, against the baseline's plain LIKE scan. The first search (after the service went idle) is reported too.
 */
export async function keywordSearch(ctx: OpenCtx, token: string, baseId: string, tableId: string, records: number, opts: { seconds: number }) {
  const svc = makeTarget('service', ctx.svcUrl, { authorization: `Bearer ${token}` }, 1, ctx.servicePid);
  const search = (q: string): Req => ({ method: 'GET', path: `${openBase(baseId, tableId)}/search?q=${encodeURIComponent(q)}&per_page=20` });
  const label = `${records.toLocaleString('en-US')} rec`;

  // The very first search of the table: whatever catching up and cold caches it costs.
  log('T4. keyword search: first search after the service went idle…');
  const first = await timed('T4. first search', () => send(svc, search(RARE_WORD)));
  if (first.status !== 200) throw new Error(`T4 first search → ${first.status}: ${first.body.toString('utf8').slice(0, 300)}`);
  const firstTotal = JSON.parse(first.body.toString('utf8')).pagination?.total;

  const terms = [
    { id: 'T4a', q: RARE_WORD, what: `rare term (in ${RARE_RECORDS} records)`, limitMs: 50 },
    { id: 'T4b', q: COMMON_WORD, what: `common term (in ~${Math.round(COMMON_SHARE * 100)}% of records)`, limitMs: 250 },
  ];
  for (const term of terms) {
    log(`${term.id}. keyword search, ${term.what}, per_page=20 + total…`);
    const next = (): Req => search(term.q);
    const answer = await sameAnswer(svc, ctx.base, next(), `search ${term.q}`, ctx.problems, openParts);
    await warm(svc, next, 3, 1);
    await warm(ctx.base, next, 1, 1);
    const m = await alternate({ t: svc, next, label: `${term.id}. keyword search, ${term.what}` }, { t: ctx.base, next },
      { concurrency: 1, seconds: opts.seconds, maxRequests: 200, minRequests: 2 });
    ctx.rows.push({
      id: term.id, workload: `Open API search "${term.q}", ${term.what}, per_page=20 + total, ${label}`, unit: 'ms p50',
      service: m.a.p50, baseline: m.b.p50, baselineLabel: 'LIKE scan', ratio: m.a.p50 / m.b.p50, target: `<= ${term.limitMs} ms`, pass: m.a.p50 <= term.limitMs,
      details: { service: m.a, baseline: m.b, total: answer.pagination?.total },
    });
  }
  ctx.rows.push({
    id: 'T4f', workload: `  first search of the table after idle ("${RARE_WORD}")`, unit: 'ms', service: first.ms, baseline: null, ratio: null,
    target: '-', pass: true, info: true, details: { total: firstTotal },
  });
  log(`   first search ${fmt(first.ms)} ms`);
}
