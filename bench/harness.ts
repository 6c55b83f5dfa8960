// Shared pieces of the bench's workloads: profile windows, alternating A/B measurement, warm-up, table creation,
// seeding through the batch endpoint and the "same answer" check that keeps a baseline honest.
import { isDeepStrictEqual } from 'node:util';
import { batchBody, FIELDS, prng } from './data.js';
import { load, send, sendJson, summarize, type Req, type Stats, type Target } from './http-load.js';
import { profileClock } from './profile.js';
import { fmt } from './report.js';

export const BATCH = 1000;
export const log = (...args: unknown[]) => console.log(...args);

/** When the service was under each measured load, so a BENCH_PROFILE profile can be cut per workload. */
export const windows = new Map<string, Array<[number, number]>>();
export async function timed<T>(label: string | undefined, work: () => Promise<T>): Promise<T> {
  const from = profileClock();
  try {
    return await work();
  } finally {
    if (label) windows.set(label, [...(windows.get(label) ?? []), [from, profileClock()]]);
  }
}

/** Stats of several runs of the same workload taken as one (requests and time add up). */
export function merge(parts: Stats[], all: number[][]): Stats {
  const seconds = parts.reduce((a, p) => a + p.seconds, 0);
  const stats = summarize(all.flat(), seconds, parts.reduce((a, p) => a + p.bytes, 0));
  // Time-weighted CPU of the parts.
  const cores = (pick: (p: Stats) => number | null | undefined) =>
    parts.every((p) => typeof pick(p) === 'number') ? parts.reduce((a, p) => a + (pick(p) as number) * p.seconds, 0) / seconds : null;
  stats.serverCores = cores((p) => p.serverCores);
  stats.clientCores = cores((p) => p.clientCores) ?? undefined;
  if (parts.some((p) => p.dbCores !== undefined)) stats.dbCores = cores((p) => p.dbCores);
  if (parts.some((p) => p.otherCores !== undefined)) stats.otherCores = cores((p) => p.otherCores);
  return stats;
}

/** Alternations per A/B measurement (BENCH_ROUNDS; more of them average out a machine whose speed drifts). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 0) || 4;

export interface Side {
  t: Target;
  next: (i: number) => Req;
  label?: string;
}

/**
 * Measures A and B in alternating slices (A B A B ...), so drift over time (page cache, GC, a noisy neighbour)
 * lands on both sides alike; the loads never overlap. `seconds` and `maxRequests` bound each side in total.
 * `after` runs after each slice, outside the measured time (e.g. to let background work drain before the other side).
 */
export async function alternate(a: Side, b: Side, opts: {
  concurrency: number; seconds: number; maxRequests: number; minRequests?: number;
  after?: (side: 'a' | 'b', round: number) => Promise<void>;
}) {
  const out = { a: [] as Stats[], b: [] as Stats[], la: [] as number[][], lb: [] as number[][] };
  for (let round = 0; round < ROUNDS; round++) {
    // A B, then B A: whatever favours the side that runs first or second in a round (a settled server, a warm JIT)
    // favours both alike.
    for (const side of round % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      const s = side === 'a' ? a : b;
      const lat: number[] = [];
      const st = await timed(s.label, () => load(s.t, {
        concurrency: opts.concurrency, seconds: opts.seconds / ROUNDS, maxRequests: Math.ceil(opts.maxRequests / ROUNDS), minRequests: opts.minRequests,
        next: (i) => s.next(i + round * 100_003), onResponse: (res) => lat.push(res.ms),
      }));
      out[side].push(st);
      if (process.env.BENCH_SLICES) log(`   slice ${round} ${side}: ${st.rps.toFixed(0)} req/s, server ${st.serverCores?.toFixed(2)} cores`);
      (side === 'a' ? out.la : out.lb).push(lat);
      if (opts.after) await opts.after(side, round);
    }
  }
  return { a: merge(out.a, out.la), b: merge(out.b, out.lb) };
}

export async function warm(t: Target, next: (i: number) => Req, n: number, concurrency: number) {
  await load(t, { concurrency, seconds: 30, maxRequests: n, next });
}

/** Creates a table with the bench's 10 fields in the caller's default base; returns its id and base id. */
export async function createTableIn(svc: Target, name: string): Promise<{ id: string; baseId: string }> {
  const res = await sendJson(svc, { method: 'POST', path: '/api/v1/tables', body: JSON.stringify({ name, fields: FIELDS }) });
  return { id: res.data.id as string, baseId: res.data.base_id as string };
}

export async function createTable(svc: Target, name: string): Promise<string> {
  return (await createTableIn(svc, name)).id;
}

/**
 * Seeds `total` records in batches of 1000 through POST .../records/batch, one request at a time so creation order
 * is deterministic; the next body is generated while the current request is in flight. With `count` below `total`,
 * only the first `count` records of the `total`-record table go through the API; the returned PRNG then continues
 * with record number `count`, for the caller to write the rest another way.
 */
export async function seed(t: Target, tableId: string, total: number, seedValue: number, label: string, query = '', count = total) {
  const r = prng(seedValue);
  const batches = Math.ceil(count / BATCH);
  const size = (i: number) => Math.min(BATCH, count - i * BATCH);
  const latencies: number[] = [];
  let bytes = 0;
  let body = batchBody(r, size(0), 0, total);
  const started = performance.now();
  let lastReport = started;
  for (let i = 0; i < batches; i++) {
    const pending = send(t, { method: 'POST', path: `/api/v1/tables/${tableId}/records/batch${query}`, body });
    if (i + 1 < batches) body = batchBody(r, size(i + 1), (i + 1) * BATCH, total);
    const res = await pending;
    if (res.status !== 200) throw new Error(`${t.name} batch ${i} → ${res.status}: ${res.body.toString('utf8').slice(0, 500)}`);
    latencies.push(res.ms);
    bytes += res.body.length;
    const now = performance.now();
    if (now - lastReport > 10_000) {
      log(`  ${label}: ${((i + 1) * BATCH).toLocaleString('en-US')} / ${count.toLocaleString('en-US')} records, ${fmt(((i + 1) * BATCH) / ((now - started) / 1000))} records/s`);
      lastReport = now;
    }
  }
  const stats = summarize(latencies, (performance.now() - started) / 1000, bytes);
  return { stats, recordsPerSecond: count / stats.seconds, prng: r };
}

/**
 * Fetches the same request from service and baseline and checks the chosen parts of the answers are equal (by
 * default `data`), so the baseline is honest. Returns the service's answer.
 */
export async function sameAnswer(svc: Target, base: Target, r: Req, label: string, problems: string[], pick: (answer: any) => unknown = (x) => x.data) {
  const [a, b] = await Promise.all([sendJson(svc, r), sendJson(base, r)]);
  if (!isDeepStrictEqual(pick(a), pick(b))) {
    const msg = `baseline answer differs from the service for ${label}: service ${JSON.stringify(pick(a)).slice(0, 300)} … baseline ${JSON.stringify(pick(b)).slice(0, 300)}`;
    problems.push(msg);
    log(`  WARNING: ${msg}`);
  }
  return a;
}
