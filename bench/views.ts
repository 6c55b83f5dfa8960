// Issue 16 workloads, views (contract section 13): V1 a view's record list against the same filter and sort given as
// parameters, on the 100,000-record list table; V2 a shared view's page of 100 records from it, without login (median).
import { alternate, log, warm } from './harness.js';
import { send, sendJson, summarize, type Req, type Target } from './http-load.js';
import { fmt, type Row } from './report.js';
import { CONNECTIONS, LIST_PAGES, ONLY, PAGE_SIZE } from './settings.js';

export interface ViewsCtx {
  svc: Target;
  rows: Row[];
  problems: string[];
  prefix?: string;
}

const enc = encodeURIComponent;
/** Most records match (every status but one), so the view's pages are as full as the plain list's. */
const FILTER = { conjunction: 'and', conditions: [{ field: 'status', operator: 'neq', value: 'archived' }] };
const SORT = [{ field: 'amount', direction: 'desc' }];

/** V1: GET records?view_id= against GET records?filter=&sort= with the same filter and sort; the ratio of throughputs. */
export async function viewList(ctx: ViewsCtx, tableId: string, seconds: number) {
  const id = `${ctx.prefix ?? ''}V1`;
  log(`${id}. list through a view (filter + sort) vs the same filter and sort as parameters, page_size=${PAGE_SIZE}…`);
  const view = (await sendJson(ctx.svc, { method: 'POST', path: `/api/v1/tables/${tableId}/views`, body: JSON.stringify({ name: `bench view ${Date.now()}`, filter: FILTER, sort: SORT }) })).data;
  const pages = Math.min(LIST_PAGES, 20);
  const byView = (i: number): Req => ({ method: 'GET', path: `/api/v1/tables/${tableId}/records?view_id=${view.id}&page=${1 + (i % pages)}&page_size=${PAGE_SIZE}` });
  const byParams = (i: number): Req => ({ method: 'GET', path: `/api/v1/tables/${tableId}/records?filter=${enc(JSON.stringify(FILTER))}&sort=${enc(JSON.stringify(SORT))}&page=${1 + (i % pages)}&page_size=${PAGE_SIZE}` });
  const [a, b] = await Promise.all([sendJson(ctx.svc, byView(3)), sendJson(ctx.svc, byParams(3))]);
  if (JSON.stringify(a.data) !== JSON.stringify(b.data)) ctx.problems.push(`${id}: the view's page differs from the filter+sort page`);
  await warm(ctx.svc, byView, 200, CONNECTIONS);
  await warm(ctx.svc, byParams, 200, CONNECTIONS);
  const r = await alternate({ t: ctx.svc, next: byView, label: `${id}. view list` }, { t: ctx.svc, next: byParams, label: `${id}. filter+sort list` }, { concurrency: CONNECTIONS, seconds, maxRequests: 1_000_000 });
  const ratio = r.a.rps / r.b.rps;
  ctx.rows.push({
    id, workload: `list via view_id vs the same filter+sort (view ${((1 - ratio) * 100).toFixed(1)}% ${ratio <= 1 ? 'slower' : 'faster'})`, unit: 'req/s',
    service: r.a.rps, baseline: r.b.rps, baselineLabel: 'filter+sort', ratio, target: 'within 5%', pass: Math.abs(1 - ratio) <= 0.05,
    details: { view: r.a, params: r.b },
  });
  return view.id as string;
}

/** V2: a shared grid view's pages of 100 (the table's default view: every record), one request at a time, median. */
export async function sharedPage(ctx: ViewsCtx, tableId: string, records: number) {
  const id = `${ctx.prefix ?? ''}V2`;
  log(`${id}. shared view page of ${PAGE_SIZE} from ${records.toLocaleString('en-US')} records, no login…`);
  const views = (await sendJson(ctx.svc, { method: 'GET', path: `/api/v1/tables/${tableId}/views` })).data as Array<{ id: string; name: string }>;
  const grid = views.find((v) => v.name === 'Grid view') ?? views[0];
  const share = (await sendJson(ctx.svc, { method: 'POST', path: `/api/v1/views/${grid.id}/share` })).data.share_id as string;
  const anon: Target = { ...ctx.svc, headers: {} };
  const pages = Math.min(LIST_PAGES, Math.ceil(records / PAGE_SIZE));
  const page = (i: number): Req => ({ method: 'GET', path: `/api/share/${share}/records?page=${1 + (i % pages)}&page_size=${PAGE_SIZE}` });
  const first = await send(anon, page(0));
  const body = JSON.parse(first.body.toString('utf8'));
  if (first.status !== 200 || body.data.items.length !== PAGE_SIZE) ctx.problems.push(`${id}: the shared page answered ${first.status} with ${body.data?.items?.length} records`);
  for (let i = 0; i < 100; i++) await send(anon, page(i));
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < 500; i++) latencies.push((await send(anon, page(i))).ms);
  const s = summarize(latencies, (performance.now() - started) / 1000, 0);
  log(`   median ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms`);
  ctx.rows.push({
    id, workload: `shared view page of ${PAGE_SIZE} from ${records.toLocaleString('en-US')} (p99 ${fmt(s.p99)} ms)`, unit: 'ms p50',
    service: s.p50, baseline: null, ratio: null, target: '<= 20 ms', pass: s.p50 <= 20, details: { latencies: s },
  });
}

/** V1 and V2 on the list table, as BENCH_ONLY selects them. */
export async function viewWorkloads(ctx: ViewsCtx, tableId: string, records: number, seconds: number) {
  if (ONLY.has(`${ctx.prefix ?? ''}V1`)) await viewList(ctx, tableId, seconds);
  if (ONLY.has(`${ctx.prefix ?? ''}V2`)) await sharedPage(ctx, tableId, records);
}
