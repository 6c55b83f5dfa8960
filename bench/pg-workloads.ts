// The PostgreSQL workloads of `npm run bench` (run by bench/postgres.ts): PG1 list throughput, PG2 indexed eq filter,
// PG3 keyword search, PG4 batch create, each beside bench/pg-baseline-server.ts in alternating slices after checking
// both answer the same; PGW (and PGWF) the list's throughput with WORKERS=1, 2 and 4 (the service restarted for each).
import type pg from 'pg';
import { codeValue, COMMON_SHARE, COMMON_WORD, DISTINCT, RARE_RECORDS, RARE_WORD } from './data.js';
import { alternate, BATCH, log, merge, sameAnswer, seed, timed, warm } from './harness.js';
import { load, makeTarget, send, type Req, type Stats, type Target } from './http-load.js';
import { createBenchApp, issueToken, openList } from './open-api.js';
import { pgListSql, pgPlans, pgTableMeta } from './pg-sql.js';
import { metered, type SeedResult } from './pg-seed.js';
import { fmt, type Row } from './report.js';
import {
  BIG_RECORDS, CONNECTIONS, enc, eqFilter, graphqlList, LATENCY_SECONDS, LIST_PAGES, LIST_RECORDS, listPath, ONLY, PAGE_SIZE, SEED_LIST, SLOW_SECONDS, THROUGHPUT_SECONDS,
} from './settings.js';

export interface PgCtx {
  /** The service on PostgreSQL with the administrator's token. */
  svc: Target;
  /** The raw node:http + pg baseline. */
  base: Target;
  /** The bench's own connection to the service's database (query plans). */
  db: pg.Pool;
  rows: Row[];
  problems: string[];
}

const n = (x: number) => x.toLocaleString('en-US');

/** PG4: batch create while seeding the list table, against the baseline writing the same batches to a copy of it. */
export async function pgBatchRows(ctx: PgCtx, listTable: string, seedList: SeedResult, listBusy: number) {
  log('PG4. batch create: baseline writes the same batches into a copy of the record table…');
  const plain = await metered(ctx.base, () => seed(ctx.base, listTable, LIST_RECORDS, SEED_LIST, 'PG baseline'));
  const svc = seedList.api;
  ctx.rows.push({
    id: 'PG4', workload: `PG batch create, ${BATCH}/request, 10 fields (${n(LIST_RECORDS)} into empty table)`, unit: 'rec/s',
    service: svc.recordsPerSecond, baseline: plain.recordsPerSecond, ratio: svc.recordsPerSecond / plain.recordsPerSecond,
    target: '>= 10,000 rec/s', pass: svc.recordsPerSecond >= 10_000, details: { service: svc.stats, baseline: plain.stats, backgroundSeconds: listBusy },
  });
  const sustained = LIST_RECORDS / (svc.stats.seconds + listBusy);
  ctx.rows.push({
    id: 'PG4s', workload: `  same, sustained: incl. ${listBusy.toFixed(1)} s until the search index caught up`, unit: 'rec/s',
    service: sustained, baseline: null, ratio: null, target: '-', pass: true, info: true,
  });
}

/** Info rows of seeding the 1M-record table: the API part's rate, the SQL part, the search indexer catching up. */
export function bigSeedRows(seedBig: SeedResult, indexSeconds: number): Row[] {
  const api = seedBig.api;
  return [{
    id: 'PG4b', workload: `  PG batch create, first ${n(seedBig.apiRecords)} of the ${n(BIG_RECORDS)}-record table` +
      (seedBig.sqlRecords ? ` (other ${n(seedBig.sqlRecords)} by SQL INSERT: ${fmt(seedBig.sqlRecords / seedBig.sqlSeconds)} rec/s)` : ''),
    unit: 'rec/s', service: api.recordsPerSecond, baseline: null, ratio: null, target: '-', pass: true, info: true, details: { service: api.stats, sql: { records: seedBig.sqlRecords, seconds: seedBig.sqlSeconds } },
  }, {
    id: 'PG3i', workload: `  search indexer catching up after seeding the ${n(BIG_RECORDS)}-record table${seedBig.sqlRecords ? ' (service restarted)' : ''}`,
    unit: 's', service: indexSeconds, baseline: null, ratio: null, target: '-', pass: true, info: true,
  }];
}

/** PG1: list pages 1..50 of the 100,000-record table at 16 connections. */
export async function pgList(ctx: PgCtx, listTable: string) {
  log(`PG1. list, page_size ${PAGE_SIZE}, pages 1..${LIST_PAGES}, ${CONNECTIONS} connections…`);
  const next = (i: number): Req => ({ method: 'GET', path: listPath(listTable, 1 + (i % LIST_PAGES)) });
  for (const p of [1, LIST_PAGES]) await sameAnswer(ctx.svc, ctx.base, next(p - 1), `PG list page ${p}`, ctx.problems);
  await warm(ctx.svc, next, 300, CONNECTIONS);
  await warm(ctx.base, next, 300, CONNECTIONS);
  const r = await alternate({ t: ctx.svc, next, label: 'PG1. list' }, { t: ctx.base, next }, { concurrency: CONNECTIONS, seconds: THROUGHPUT_SECONDS, maxRequests: 1_000_000 });
  const ratio = r.a.rps / r.b.rps;
  ctx.rows.push({
    id: 'PG1', workload: `PG list page_size=${PAGE_SIZE}, ${n(LIST_RECORDS)} rec, ${CONNECTIONS} conns`, unit: 'req/s',
    service: r.a.rps, baseline: r.b.rps, ratio, target: '>= 0.50x baseline', pass: ratio >= 0.5, details: { service: r.a, baseline: r.b },
  });
}

/**
 * PG5 and PGT2: the list's other two doors on PostgreSQL, the same pages as PG1. PG5 alternates the REST facade with
 * `/graphql` on the service (the GraphQL door within 15 % of REST); PGT2 alternates the Open API list (an app's token)
 * with the baseline serving the same SQL in the open envelope.
 */
export async function pgDoors(ctx: PgCtx, svcUrl: string, baseId: string, listTable: string) {
  const rest = (i: number): Req => ({ method: 'GET', path: listPath(listTable, 1 + (i % LIST_PAGES)) });
  if (ONLY.has('PG5')) {
    log(`PG5. REST vs /graphql, same list pages, ${CONNECTIONS} connections…`);
    const gql = (i: number): Req => graphqlList(listTable, 1 + (i % LIST_PAGES));
    const [r1, g1] = await Promise.all([send(ctx.svc, rest(0)), send(ctx.svc, gql(0))]).then((all) => all.map((x) => JSON.parse(x.body.toString('utf8'))));
    if (g1.errors || g1.data.records.items.length !== r1.data.items.length || g1.data.records.items[0]?.id !== r1.data.items[0]?.id) {
      ctx.problems.push(`PG5: the GraphQL list answer does not match REST: ${JSON.stringify(g1).slice(0, 300)}`);
    }
    await warm(ctx.svc, rest, 300, CONNECTIONS);
    await warm(ctx.svc, gql, 300, CONNECTIONS);
    const r = await alternate({ t: ctx.svc, next: rest, label: 'PG5. REST list' }, { t: ctx.svc, next: gql, label: 'PG5. GraphQL list' }, { concurrency: CONNECTIONS, seconds: THROUGHPUT_SECONDS, maxRequests: 1_000_000 });
    const slower = r.b.rps / r.a.rps - 1;
    ctx.rows.push({
      id: 'PG5', workload: `PG REST facade vs /graphql, list page_size=${PAGE_SIZE} (REST ${(Math.abs(slower) * 100).toFixed(1)}% ${slower >= 0 ? 'slower' : 'faster'})`, unit: 'req/s',
      service: r.a.rps, baseline: r.b.rps, baselineLabel: 'GraphQL', ratio: r.a.rps / r.b.rps, target: 'REST <= 15% slower', pass: slower <= 0.15,
      details: { rest: r.a, graphql: r.b, restSlowerBy: slower },
    });
  }
  if (ONLY.has('PGT2')) {
    const token = await issueToken(makeTarget('service', svcUrl), await createBenchApp(ctx.svc, baseId));
    await openList({ ...ctx, svcUrl, servicePid: ctx.svc.pid, connections: CONNECTIONS }, token, baseId, listTable, LIST_PAGES, LIST_RECORDS, THROUGHPUT_SECONDS, 'PGT2');
  }
}

/** One request at a time, service and baseline alternating: the median latency against a limit. */
async function latencyRow(ctx: PgCtx, id: string, workload: string, next: (i: number) => Req, limitMs: number, opts: { seconds: number; maxRequests: number; minRequests: number; warm: number; baselineLabel?: string; info?: boolean; pick?: (answer: any) => unknown }, extra: Record<string, unknown> = {}) {
  log(`${id}. ${workload}…`);
  const first = await sameAnswer(ctx.svc, ctx.base, next(0), workload, ctx.problems, opts.pick);
  await warm(ctx.svc, next, opts.warm, 1);
  await warm(ctx.base, next, opts.warm, 1);
  const r = await alternate({ t: ctx.svc, next, label: `${id}. ${workload}` }, { t: ctx.base, next }, { concurrency: 1, seconds: opts.seconds, maxRequests: opts.maxRequests, minRequests: opts.minRequests });
  ctx.rows.push({
    id, workload, unit: 'ms p50', service: r.a.p50, baseline: r.b.p50, baselineLabel: opts.baselineLabel, ratio: r.a.p50 / r.b.p50,
    target: opts.info ? '-' : `<= ${limitMs} ms`, pass: opts.info || r.a.p50 <= limitMs, info: opts.info,
    details: { service: r.a, baseline: r.b, total: first.data?.total ?? first.pagination?.total, ...extra },
  });
}

/** PG2: eq filter on the indexed text field of the 1M-record table, page 1 and the total. */
export async function pgFilter(ctx: PgCtx, bigTable: string) {
  const next = (i: number): Req => ({ method: 'GET', path: listPath(bigTable, 1, `&filter=${enc(eqFilter('code', codeValue((i * 7919) % DISTINCT)))}`) });
  const { schema, fields } = await pgTableMeta(ctx.db, bigTable);
  const plan = await pgPlans(ctx.db, pgListSql(schema, bigTable, fields, { filter: eqFilter('code', codeValue(0)) }), PAGE_SIZE);
  await latencyRow(ctx, 'PG2', `PG eq on indexed text, page 1 + total, ${n(BIG_RECORDS)} rec`, next, 10,
    { seconds: LATENCY_SECONDS, maxRequests: 300, minRequests: 10, warm: 20 }, { plan });
  log(`   plan: page ${plan.page} | count ${plan.count}`);
}

/**
 * PG3: Open API keyword search on the 1M-record table, per_page=20 with the total, one request at a time: the rare term
 * (the target) and the common one (info), against the baseline running the same trigram-index SQL; the first search
 * after the service went idle is reported on its own.
 */
export async function pgSearch(ctx: PgCtx, svcUrl: string, baseId: string, bigTable: string, settle: () => Promise<number>) {
  const app = await createBenchApp(ctx.svc, baseId);
  const token = await issueToken(makeTarget('service', svcUrl), app);
  const svc: Target = { ...makeTarget('pg service', svcUrl, { authorization: `Bearer ${token}` }, 1), serverCpu: ctx.svc.serverCpu, dbCpu: ctx.svc.dbCpu };
  const search = (q: string): Req => ({ method: 'GET', path: `/api/open/v1/bases/${baseId}/tables/${bigTable}/records/search?q=${encodeURIComponent(q)}&per_page=20` });
  await settle();
  log('PG3. keyword search: first search after the service went idle…');
  const first = await timed('PG3. first search', () => send(svc, search(RARE_WORD)));
  if (first.status !== 200) throw new Error(`PG3 first search → ${first.status}: ${first.body.toString('utf8').slice(0, 300)}`);
  const sub = { ...ctx, svc };
  // The parts of the open envelope that must agree (the request id differs by design).
  const pick = (x: any) => ({ code: x.code, message: x.message, data: x.data, pagination: x.pagination });
  const opts = { seconds: SLOW_SECONDS, minRequests: 2, warm: 3, baselineLabel: 'same SQL', pick };
  await latencyRow(sub, 'PG3', `PG Open API search "${RARE_WORD}", rare term (in ${RARE_RECORDS} records), per_page=20 + total, ${n(BIG_RECORDS)} rec`,
    () => search(RARE_WORD), 50, { ...opts, maxRequests: 200 });
  await latencyRow(sub, 'PG3b', `  same, common term "${COMMON_WORD}" (in ~${Math.round(COMMON_SHARE * 100)}% of records)`,
    () => search(COMMON_WORD), 250, { ...opts, maxRequests: 40, info: true });
  ctx.rows.push({
    id: 'PG3f', workload: `  first search of the table after idle ("${RARE_WORD}")`, unit: 'ms', service: first.ms, baseline: null, ratio: null,
    target: '-', pass: true, info: true,
  });
  log(`   first search ${fmt(first.ms)} ms`);
}

/**
 * PGW: the list workload (PG1's requests, 16 connections) against the service restarted with WORKERS=1, 2 and 4, one
 * process tree over the one database; the CPU of the service's processes, of the load generator and of PostgreSQL
 * says which of them the machine's cores went to. Each unfiltered page counts the whole table, which keeps PostgreSQL
 * busy; so PGWF measures, on the same restarts, pages of an eq filter on the indexed field (about 100 matches, the
 * count from the index): the same response size with little database work, i.e. what the service's own processes scale
 * to. Measured in the order 1, 2, 4, 2, 1 (half the time in each outer run), so a drift in what else the machine does
 * lands on every setting alike.
 */
export async function scaleOut(ctx: PgCtx, listTable: string, restartWith: (workers: number) => Promise<Target>) {
  const workloads = [
    { id: 'PGW', what: 'list', next: (i: number): Req => ({ method: 'GET', path: listPath(listTable, 1 + (i % LIST_PAGES)) }) },
    { id: 'PGWF', what: 'eq-filtered list (~100 matches)', next: (i: number): Req => ({ method: 'GET', path: listPath(listTable, 1, `&filter=${enc(eqFilter('code', codeValue((i * 7919) % DISTINCT)))}`) }) },
  ];
  const parts = new Map<string, { stats: Stats[]; latencies: number[][] }>();
  for (const workers of [1, 2, 4, 2, 1]) {
    const seconds = workers === 4 ? THROUGHPUT_SECONDS : THROUGHPUT_SECONDS / 2;
    const t = await restartWith(workers);
    for (const w of workloads) {
      log(`${w.id}. ${w.what} throughput with WORKERS=${workers}, ${seconds} s…`);
      await warm(t, w.next, 300 * workers, CONNECTIONS);
      const latencies: number[] = [];
      const stats = await timed(`${w.id}. ${w.what}, WORKERS=${workers}`, () => load(t, { concurrency: CONNECTIONS, seconds, maxRequests: 1_000_000, next: w.next, onResponse: (res) => latencies.push(res.ms) }));
      const key = `${w.id}${workers}`;
      const p = parts.get(key) ?? { stats: [], latencies: [] };
      p.stats.push(stats);
      p.latencies.push(latencies);
      parts.set(key, p);
      log(`   ${fmt(stats.rps)} req/s; cores: service ${fmt(stats.serverCores)}, client ${fmt(stats.clientCores)}, postgres ${fmt(stats.dbCores)}, rest of machine ${fmt(stats.otherCores)}`);
    }
  }
  for (const w of workloads) {
    const merged = (workers: number) => {
      const p = parts.get(`${w.id}${workers}`)!;
      return merge(p.stats, p.latencies);
    };
    const one = merged(1).rps;
    for (const workers of [1, 2, 4]) {
      const stats = merged(workers);
      const ratio = stats.rps / one;
      const target = w.id === 'PGW' && workers === 2;
      ctx.rows.push({
        id: `${w.id}${workers}`, workload: `PG ${w.what} scale-out, WORKERS=${workers}${workers === 1 ? ' (the curve\'s base)' : ''}, ${CONNECTIONS} conns`, unit: 'req/s',
        service: stats.rps, baseline: workers === 1 ? null : one, baselineLabel: 'WORKERS=1', ratio: workers === 1 ? null : ratio,
        target: target ? '>= 1.6x WORKERS=1' : '-', pass: !target || ratio >= 1.6, info: !target, details: { service: stats },
      });
    }
  }
}
