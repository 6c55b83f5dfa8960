// Issue 14 workloads, computed fields (contract section 12), on either engine: C1 an edit that fans out to 10,000
// dependent cells across three tables; C2 a list page with 5 computed fields beside the same page without them (and,
// on SQLite, C2raw the same two pages from the raw baseline: what the values alone cost); C3 a
// formula added to the 100,000-record list table, until every record has its value; C4 a formula added to the
// 1,000,000-record table while other requests keep arriving (the longest any of them waited).
import { batchBody, FIELDS, prng } from './data.js';
import { alternate, BATCH, log, timed, warm } from './harness.js';
import { send, sendJson, summarize, type Req, type Stats, type Target } from './http-load.js';
import { fmt, type Row } from './report.js';
import { CONNECTIONS, PAGE_SIZE } from './settings.js';

export interface ComputedCtx {
  svc: Target;
  rows: Row[];
  problems: string[];
  /** Row ids get this prefix (e.g. "PG" on PostgreSQL). */
  prefix?: string;
  /** Waits until the service stops using the CPU on its own. */
  settle(): Promise<unknown>;
  /** The engine's raw baseline, reading the service's database (C2 lists the same two tables through it too). */
  base?: Target;
}

/** Tasks in C1: each has two computed cells (a rollup and a formula over it), so an edit of their owner changes 10,000. */
const FANOUT_TASKS = 5_000;
const FANOUT_PROJECTS = 50;
const FANOUT_EDITS = 5;

async function table(svc: Target, name: string, fields: unknown[]): Promise<string> {
  return (await sendJson(svc, { method: 'POST', path: '/api/v1/tables', body: JSON.stringify({ name, fields }) })).data.id as string;
}
async function addField(svc: Target, tableId: string, field: Record<string, unknown>): Promise<{ id: string; computing: unknown }> {
  return (await sendJson(svc, { method: 'POST', path: `/api/v1/tables/${tableId}/fields`, body: JSON.stringify(field) })).data;
}
async function deleteField(svc: Target, tableId: string, fieldId: string) {
  await sendJson(svc, { method: 'DELETE', path: `/api/v1/tables/${tableId}/fields/${fieldId}` });
}
async function batchCreate(svc: Target, tableId: string, records: Array<Record<string, unknown>>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < records.length; i += BATCH) {
    const body = JSON.stringify({ action: 'create', records: records.slice(i, i + BATCH).map((fields) => ({ fields })) });
    const res = await sendJson(svc, { method: 'POST', path: `/api/v1/tables/${tableId}/records/batch`, body });
    ids.push(...(res.data.items as Array<{ id: string }>).map((r) => r.id));
  }
  return ids;
}
const getRecord = async (svc: Target, tableId: string, id: string) =>
  (await sendJson(svc, { method: 'GET', path: `/api/v1/tables/${tableId}/records/${id}` })).data.fields as Record<string, unknown>;

/** Polls the field until its background fill is over (`computing` null); returns the seconds it took from `since`. */
async function waitFilled(svc: Target, tableId: string, fieldId: string, since: number, maxSeconds: number): Promise<number> {
  for (;;) {
    const fields = (await sendJson(svc, { method: 'GET', path: `/api/v1/tables/${tableId}/fields` })).data.items as Array<{ id: string; computing: unknown }>;
    const f = fields.find((x) => x.id === fieldId);
    if (!f) throw new Error(`field ${fieldId} vanished while it was being filled`);
    const seconds = (performance.now() - since) / 1000;
    if (f.computing === null || f.computing === undefined) return seconds;
    if (seconds > maxSeconds) throw new Error(`field still computing after ${maxSeconds} s: ${JSON.stringify(f.computing)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * C1: people ← tasks (Owner link; rollup Rate = max of the owner's Rate; formula Cost = Hours × Rate) ← projects (100
 * tasks each; rollup Total = sum of Cost). Every task belongs to one person, so editing that person's Rate changes
 * 2 × 5,000 task cells and 50 project totals in the write's own transaction. The figure is that write's latency.
 */
export async function computedFanOut(ctx: ComputedCtx) {
  const id = `${ctx.prefix ?? ''}C1`;
  log(`${id}. fan-out: one edit → ${(2 * FANOUT_TASKS).toLocaleString('en-US')} task cells + ${FANOUT_PROJECTS} project totals across three tables…`);
  const people = await table(ctx.svc, `bench_c1_people_${Date.now()}`, [{ name: 'Name', type: 'text' }, { name: 'Rate', type: 'number' }]);
  const tasks = await table(ctx.svc, `bench_c1_tasks_${Date.now()}`, [
    { name: 'Title', type: 'text' }, { name: 'Hours', type: 'number' }, { name: 'Owner', type: 'link', config: { table_id: people } },
  ]);
  const projects = await table(ctx.svc, `bench_c1_projects_${Date.now()}`, [{ name: 'Name', type: 'text' }, { name: 'Tasks', type: 'link', config: { table_id: tasks } }]);
  const [hub] = await batchCreate(ctx.svc, people, [{ Name: 'hub', Rate: 1 }]);
  await addField(ctx.svc, tasks, { name: 'Rate', type: 'rollup', config: { link_field: 'Owner', field: 'Rate', function: 'max' } });
  await addField(ctx.svc, tasks, { name: 'Cost', type: 'formula', config: { expression: '{Hours} * {Rate}' } });
  const hours = (i: number) => 1 + (i % 8);
  const taskIds = await batchCreate(ctx.svc, tasks, Array.from({ length: FANOUT_TASKS }, (_, i) => ({ Title: `task ${i}`, Hours: hours(i), Owner: [hub] })));
  await addField(ctx.svc, projects, { name: 'Total', type: 'rollup', config: { link_field: 'Tasks', field: 'Cost', function: 'sum' } });
  const per = FANOUT_TASKS / FANOUT_PROJECTS;
  const projectIds = await batchCreate(ctx.svc, projects, Array.from({ length: FANOUT_PROJECTS }, (_, p) => ({ Name: `project ${p}`, Tasks: taskIds.slice(p * per, (p + 1) * per) })));
  await ctx.settle();
  const latencies: number[] = [];
  await timed(`${id}. fan-out edits`, async () => {
    for (let e = 0; e < FANOUT_EDITS; e++) {
      const rate = 2 + e;
      const res = await send(ctx.svc, { method: 'PUT', path: `/api/v1/tables/${people}/records/${hub}`, body: JSON.stringify({ fields: { Rate: rate } }) });
      if (res.status !== 200) throw new Error(`${id} edit → ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
      latencies.push(res.ms);
      // The values are current when the write has answered: the last task's cost and the last project's total.
      const last = FANOUT_TASKS - 1;
      const cost = (await getRecord(ctx.svc, tasks, taskIds[last])).Cost;
      const expectedTotal = taskIds.slice((FANOUT_PROJECTS - 1) * per).reduce((a, _t, i) => a + hours((FANOUT_PROJECTS - 1) * per + i) * rate, 0);
      const total = (await getRecord(ctx.svc, projects, projectIds[FANOUT_PROJECTS - 1])).Total;
      if (cost !== hours(last) * rate || total !== expectedTotal) ctx.problems.push(`${id}: after Rate=${rate} the last task's Cost is ${cost} (want ${hours(last) * rate}) and the last project's Total ${total} (want ${expectedTotal})`);
    }
  });
  const s = summarize(latencies, latencies.reduce((a, b) => a + b, 0) / 1000, 0);
  log(`   edit latency p50 ${fmt(s.p50)} ms, max ${fmt(s.max)} ms over ${FANOUT_EDITS} edits`);
  ctx.rows.push({
    id, workload: `edit fanning out to ${(2 * FANOUT_TASKS + FANOUT_PROJECTS).toLocaleString('en-US')} computed cells in 3 tables (max of ${FANOUT_EDITS}: ${fmt(s.max)} ms)`, unit: 'ms p50',
    service: s.p50, baseline: null, ratio: null, target: '<= 1,000 ms', pass: s.p50 <= 1000 && s.max <= 1000, details: { latencies },
  });
}

/** The C2 tables: the bench's 10 fields and an Owner link to a 10-person table; one gets 5 computed fields. */
export async function computedList(ctx: ComputedCtx, records: number, seconds: number) {
  const id = `${ctx.prefix ?? ''}C2`;
  log(`${id}. list page_size=${PAGE_SIZE} of ${records.toLocaleString('en-US')} records with 5 computed fields vs the same table without them…`);
  const people = await table(ctx.svc, `bench_c2_people_${Date.now()}`, [{ name: 'Name', type: 'text' }, { name: 'Rate', type: 'number' }]);
  const owners = await batchCreate(ctx.svc, people, Array.from({ length: 10 }, (_, i) => ({ Name: `person ${i}`, Rate: 10 + i })));
  const shape = [...FIELDS, { name: 'Owner', type: 'link', config: { table_id: people } }];
  const plain = await table(ctx.svc, `bench_c2_plain_${Date.now()}`, shape);
  const computed = await table(ctx.svc, `bench_c2_computed_${Date.now()}`, shape);
  for (const t of [plain, computed]) {
    const r = prng(7);
    for (let i = 0; i < records; i += BATCH) {
      const batch = JSON.parse(batchBody(r, Math.min(BATCH, records - i))) as { action: string; records: Array<{ fields: Record<string, unknown> }> };
      batch.records.forEach((rec, j) => { rec.fields.Owner = [owners[(i + j) % owners.length]]; });
      await sendJson(ctx.svc, { method: 'POST', path: `/api/v1/tables/${t}/records/batch`, body: JSON.stringify(batch) });
    }
  }
  const added = [
    { name: 'Double', type: 'formula', config: { expression: '{amount} * 2' } },
    { name: 'Label', type: 'formula', config: { expression: 'UPPER({name}) & " / " & {code}' } },
    { name: 'Done text', type: 'formula', config: { expression: 'IF({done}, "yes", "no")' } },
    { name: 'Owner name', type: 'lookup', config: { link_field: 'Owner', field: 'Name' } },
    { name: 'Owner rate', type: 'rollup', config: { link_field: 'Owner', field: 'Rate', function: 'max' } },
  ];
  for (const f of added) {
    const started = performance.now();
    const made = await addField(ctx.svc, computed, f);
    await waitFilled(ctx.svc, computed, made.id, started, 300);
  }
  await ctx.settle();
  const pages = Math.min(50, Math.ceil(records / PAGE_SIZE));
  const page = (t: string) => (i: number): Req => ({ method: 'GET', path: `/api/v1/tables/${t}/records?page=${1 + (i % pages)}&page_size=${PAGE_SIZE}` });
  const sample = await sendJson(ctx.svc, page(computed)(0));
  const first = sample.data.items[0]?.fields ?? {};
  if (!added.every((f) => f.name in first) || first['Owner name'] == null) ctx.problems.push(`${id}: the computed table's page lacks its computed values: ${JSON.stringify(first).slice(0, 300)}`);
  await warm(ctx.svc, page(plain), 200, CONNECTIONS);
  await warm(ctx.svc, page(computed), 200, CONNECTIONS);
  const r = await alternate({ t: ctx.svc, next: page(computed), label: `${id}. list with computed` }, { t: ctx.svc, next: page(plain), label: `${id}. list without computed` },
    { concurrency: CONNECTIONS, seconds, maxRequests: 1_000_000 });
  const ratio = r.a.rps / r.b.rps;
  ctx.rows.push({
    id, workload: `list page_size=${PAGE_SIZE} with 5 computed fields (3 formulas, lookup, rollup) vs without`, unit: 'req/s',
    service: r.a.rps, baseline: r.b.rps, baselineLabel: 'no computed', ratio, target: '>= 0.90x', pass: ratio >= 0.9, details: { computed: r.a, plain: r.b },
  });
  if (!ctx.base) return;
  // The same two pages from the raw baseline (same SQL, same link query, no layers): what the five values cost a server
  // that does nothing else, the yardstick for the ratio above.
  const base = ctx.base;
  const rawSample = await sendJson(base, page(computed)(0));
  if (JSON.stringify(rawSample.data.items) !== JSON.stringify(sample.data.items)) {
    ctx.problems.push(`${id}: the raw baseline's page differs from the service's: ${JSON.stringify(rawSample.data.items[0]).slice(0, 300)}`);
  }
  await warm(base, page(computed), 200, CONNECTIONS);
  await warm(base, page(plain), 200, CONNECTIONS);
  const raw = await alternate({ t: base, next: page(computed), label: `${id}raw. baseline list with computed` }, { t: base, next: page(plain), label: `${id}raw. baseline list without computed` },
    { concurrency: CONNECTIONS, seconds, maxRequests: 1_000_000 });
  ctx.rows.push({
    id: `${id}raw`, workload: '  same two lists from the raw baseline (what the five values cost a bare server)', unit: 'req/s',
    service: raw.a.rps, baseline: raw.b.rps, baselineLabel: 'no computed', ratio: raw.a.rps / raw.b.rps, target: '-', pass: true, info: true,
    details: { computed: raw.a, plain: raw.b },
  });
}

/** C3: a formula added to the 100,000-record list table; the figure is the time until every record has its value. */
export async function computedAddField(ctx: ComputedCtx, listTable: string, records: number) {
  const id = `${ctx.prefix ?? ''}C3`;
  log(`${id}. add a formula field to the ${records.toLocaleString('en-US')}-record list table…`);
  await ctx.settle();
  const started = performance.now();
  const made = await timed(`${id}. add formula`, async () => {
    const f = await addField(ctx.svc, listTable, { name: `c3_${Date.now()}`, type: 'formula', config: { expression: '{amount} * 2 + {rating}' } });
    await waitFilled(ctx.svc, listTable, f.id, started, 600);
    return f;
  });
  const seconds = (performance.now() - started) / 1000;
  log(`   filled in ${fmt(seconds)} s`);
  await deleteField(ctx.svc, listTable, made.id);
  ctx.rows.push({
    id, workload: `add a formula to a ${records.toLocaleString('en-US')}-record table, until every value is stored`, unit: 's',
    service: seconds, baseline: null, ratio: null, target: '<= 5 s', pass: seconds <= 5,
  });
}

/** Runs `concurrency` closed-loop workers of `next` until `until` settles; every answer's latency is kept. */
async function loadUntil(t: Target, next: (i: number) => Req, concurrency: number, until: Promise<unknown>): Promise<Stats> {
  let stop = false;
  void until.finally(() => { stop = true; });
  const latencies: number[] = [];
  let issued = 0;
  const started = performance.now();
  const worker = async () => {
    while (!stop) {
      const res = await send(t, next(issued++));
      if (res.status !== 200) throw new Error(`${t.name} → ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
      latencies.push(res.ms);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return summarize(latencies, (performance.now() - started) / 1000, 0);
}

/**
 * C4: a formula added to the 1,000,000-record table while 4 connections keep listing pages of it; the figure is the
 * longest any of those requests waited during the fill, beside the same load's latency just before it.
 */
export async function computedAddFieldBig(ctx: ComputedCtx, bigTable: string, records: number) {
  const id = `${ctx.prefix ?? ''}C4`;
  log(`${id}. add a formula field to the ${records.toLocaleString('en-US')}-record table while 4 connections list its pages…`);
  await ctx.settle();
  const next = (i: number): Req => ({ method: 'GET', path: `/api/v1/tables/${bigTable}/records?page=${1 + (i % 50)}&page_size=${PAGE_SIZE}` });
  const before = await loadUntil(ctx.svc, next, 4, new Promise((r) => setTimeout(r, 3000)));
  const started = performance.now();
  let fieldId = '';
  const fill = (async () => {
    const f = await addField(ctx.svc, bigTable, { name: `c4_${Date.now()}`, type: 'formula', config: { expression: '{amount} * 2 + {rating}' } });
    fieldId = f.id;
    return waitFilled(ctx.svc, bigTable, f.id, started, 1800);
  })();
  const during = await timed(`${id}. add formula under load`, () => loadUntil(ctx.svc, next, 4, fill));
  const seconds = await fill;
  log(`   filled in ${fmt(seconds)} s; list latency before p50 ${fmt(before.p50)} / max ${fmt(before.max)} ms, during p50 ${fmt(during.p50)} / p99 ${fmt(during.p99)} / max ${fmt(during.max)} ms (${during.requests} requests)`);
  if (fieldId) await deleteField(ctx.svc, bigTable, fieldId);
  ctx.rows.push({
    id, workload: `add a formula to a ${records.toLocaleString('en-US')}-record table (filled in ${fmt(seconds)} s): longest wait of a list request meanwhile`, unit: 'ms max',
    service: during.max, baseline: before.max, baselineLabel: 'before', ratio: during.max / before.max, target: '<= 200 ms', pass: during.max <= 200,
    details: { before, during, fillSeconds: seconds },
  });
}
