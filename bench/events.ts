// Issue 15 workloads, events (contract section 14): E1 commit-to-subscriber latency with 100 SSE subscribers on one
// table; E2 single-record creates with an Idempotency-Key beside the same creates without; E3 writes with the event
// log on beside the same build started with EVENT_LOG=off.
import http from 'node:http';
import { prng, record } from './data.js';
import { alternate, createTable, log, timed, warm } from './harness.js';
import { send, summarize, type Req, type Target } from './http-load.js';
import { fmt, type Row } from './report.js';

export interface EventsCtx {
  svc: Target;
  rows: Row[];
  problems: string[];
  settle(): Promise<unknown>;
}

const SUBSCRIBERS = 100;
const SSE_WRITES = 200;
const TABLE_EVENTS = 'subscription($t: ID!) { tableEvents(tableId: $t) { seq recordId at } }';

interface Subscriber {
  /** Receipt time minus the event's `at`, per event, in arrival order. */
  latencies: number[];
  seqs: string[];
  close(): void;
}

/** Opens one SSE subscription on its own socket; resolves once the server has answered with the stream's headers. */
function subscribe(t: Target, tableId: string): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ query: TABLE_EVENTS, variables: { t: tableId } });
    const sub: Subscriber = { latencies: [], seqs: [], close: () => req.destroy() };
    const req = http.request(`${t.base}/graphql`, {
      method: 'POST', agent: false,
      headers: { ...t.headers, accept: 'text/event-stream', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`subscription → ${res.statusCode}`));
        return;
      }
      resolve(sub);
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = Date.now();
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (!block.includes('event: next') || !data) continue;
          const e = JSON.parse(data.slice(6)).data?.tableEvents;
          if (!e) continue;
          sub.latencies.push(now - Date.parse(e.at));
          sub.seqs.push(e.seq);
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', (e) => {
      if (!sub.seqs.length) reject(e);
    });
    req.end(body);
  });
}

/**
 * E1: 100 subscribers on one table over SSE, then 200 record updates one after another; the figure is the p95 over
 * every (subscriber, event) pair of the time from the event's commit (its `at`, stamped inside the transaction) to
 * its arrival. Each subscriber must see every event once, in order.
 */
export async function sseLatency(ctx: EventsCtx) {
  log(`E1. ${SUBSCRIBERS} SSE subscribers on one table, ${SSE_WRITES} updates one at a time…`);
  const tableId = await createTable(ctx.svc, `bench_e1_${Date.now()}`);
  const r = prng(51);
  const created = await send(ctx.svc, { method: 'POST', path: `/api/v1/tables/${tableId}/records`, body: JSON.stringify({ fields: record(r) }) });
  const recordId = JSON.parse(created.body.toString('utf8')).data.id as string;
  const subs = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => subscribe(ctx.svc, tableId)));
  try {
    // Subscriptions start with the next event: give the last one a moment to be listening before the first write.
    await new Promise((res) => setTimeout(res, 500));
    await timed('E1. writes with 100 subscribers', async () => {
      for (let i = 0; i < SSE_WRITES; i++) {
        const res = await send(ctx.svc, { method: 'PUT', path: `/api/v1/tables/${tableId}/records/${recordId}`, body: JSON.stringify({ fields: { amount: i + 0.5 } }) });
        if (res.status !== 200) throw new Error(`E1 update → ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
        await new Promise((res2) => setTimeout(res2, 10));
      }
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && subs.some((s) => s.seqs.length < SSE_WRITES)) await new Promise((res2) => setTimeout(res2, 50));
    });
  } finally {
    for (const s of subs) s.close();
  }
  const short = subs.filter((s) => s.seqs.length !== SSE_WRITES || s.seqs.some((q, i) => i > 0 && BigInt(q) <= BigInt(s.seqs[i - 1])));
  if (short.length) ctx.problems.push(`E1: ${short.length} of ${SUBSCRIBERS} subscribers did not see ${SSE_WRITES} events in order once (e.g. ${short[0].seqs.length})`);
  const all = subs.flatMap((s) => s.latencies);
  const s = summarize(all, 1, 0);
  log(`   ${all.length.toLocaleString('en-US')} deliveries: p50 ${fmt(s.p50)} ms, p95 ${fmt(s.p95)} ms, max ${fmt(s.max)} ms`);
  ctx.rows.push({
    id: 'E1', workload: `commit → SSE subscriber, ${SUBSCRIBERS} subscribers on one table, ${SSE_WRITES} updates (p50 ${fmt(s.p50)} ms)`, unit: 'ms p95',
    service: s.p95, baseline: null, ratio: null, target: '<= 250 ms', pass: s.p95 <= 250 && short.length === 0, details: { stats: s },
  });
}

/**
 * Single-record creates on `tableId` (4 connections); `header` adds that header with a value unique to each request (an
 * Idempotency-Key, or for E2's other side a header the service ignores, so the load generator does the same work there).
 */
function creates(tableId: string, seed: number, header?: string) {
  const r = prng(seed);
  const bodies = Array.from({ length: 2000 }, () => JSON.stringify({ fields: record(r) }));
  return (i: number): Req => ({
    method: 'POST', path: `/api/v1/tables/${tableId}/records`, body: bodies[i % bodies.length],
    headers: header ? { [header]: `bench-${i}-${Math.random().toString(36).slice(2)}` } : undefined,
  });
}

/** E2: single-record creates with a fresh Idempotency-Key each, beside the same creates without one. */
export async function idempotencyCost(ctx: EventsCtx, seconds: number) {
  log('E2. single-record creates, 4 connections: with an Idempotency-Key vs without…');
  const withKey = await createTable(ctx.svc, `bench_e2_key_${Date.now()}`);
  const without = await createTable(ctx.svc, `bench_e2_plain_${Date.now()}`);
  const a = creates(withKey, 52, 'idempotency-key');
  const b = creates(without, 52, 'x-bench-tag');
  await warm(ctx.svc, a, 2000, 4);
  await warm(ctx.svc, b, 2000, 4);
  // The warm-ups' background work (search indexing, kept answers) would otherwise land in the first slice, side A's.
  await ctx.settle();
  const r = await alternate({ t: ctx.svc, next: a, label: 'E2. creates with Idempotency-Key' }, { t: ctx.svc, next: b, label: 'E2. creates without' },
    { concurrency: 4, seconds, maxRequests: 1_000_000, after: async () => { await ctx.settle(); } });
  const ratio = r.a.rps / r.b.rps;
  ctx.rows.push({
    id: 'E2', workload: `single-record creates with an Idempotency-Key vs without (${(100 * (1 - ratio)).toFixed(1)}% slower; p50 ${fmt(r.a.p50)} vs ${fmt(r.b.p50)} ms)`, unit: 'req/s',
    service: r.a.rps, baseline: r.b.rps, baselineLabel: 'no key', ratio, target: '>= 0.90x', pass: ratio >= 0.9, details: { withKey: r.a, without: r.b },
  });
}

/**
 * E3: the same writes on `ctx.svc` and on `off` (the same build with EVENT_LOG=off; both started fresh for it):
 * single-record creates over 4 connections, and batches of 100.
 */
export async function eventLogCost(ctx: EventsCtx, off: { t: Target; settle(): Promise<unknown> }, seconds: number) {
  log('E3. writes with the event log on vs the same build with EVENT_LOG=off…');
  const onSingle = await createTable(ctx.svc, `bench_e3_on_${Date.now()}`);
  const offSingle = await createTable(off.t, `bench_e3_off_${Date.now()}`);
  const settleBoth = async () => { await ctx.settle(); await off.settle(); };
  // Both services warmed up (JIT) on both loads first, and settled, so that neither side's first slice pays for it.
  const onCreates = creates(onSingle, 53), offCreates = creates(offSingle, 53);
  await warm(ctx.svc, onCreates, 2000, 4);
  await warm(off.t, offCreates, 2000, 4);
  await settleBoth();
  const single = await alternate({ t: ctx.svc, next: onCreates, label: 'E3. creates, events on' }, { t: off.t, next: offCreates },
    { concurrency: 4, seconds, maxRequests: 1_000_000, after: settleBoth });
  const r = prng(54);
  const batches = Array.from({ length: 50 }, () => JSON.stringify({ action: 'create', records: Array.from({ length: 100 }, () => ({ fields: record(r) })) }));
  const batch = (tableId: string) => (i: number): Req => ({ method: 'POST', path: `/api/v1/tables/${tableId}/records/batch`, body: batches[i % batches.length] });
  await warm(ctx.svc, batch(onSingle), 20, 2);
  await warm(off.t, batch(offSingle), 20, 2);
  await settleBoth();
  const bOn = await alternate({ t: ctx.svc, next: batch(onSingle), label: 'E3. batches, events on' }, { t: off.t, next: batch(offSingle) },
    { concurrency: 2, seconds, maxRequests: 1_000_000, after: settleBoth });
  for (const [label, res, unit, per] of [['single-record creates, 4 connections', single, 'req/s', 1], ['batch creates of 100, 2 connections', bOn, 'rec/s', 100]] as const) {
    const ratio = res.a.rps / res.b.rps;
    ctx.rows.push({
      id: per === 1 ? 'E3' : 'E3b', workload: `${label}: event log on vs EVENT_LOG=off (${(100 * (1 - ratio)).toFixed(1)}% slower)`, unit,
      service: res.a.rps * per, baseline: res.b.rps * per, baselineLabel: 'events off', ratio, target: '>= 0.85x', pass: ratio >= 0.85, details: { on: res.a, off: res.b },
    });
  }
}
