// Issue 4 workloads: W1 how fast the workflow runner completes runs of a one-node update_record workflow, W2 what an
// enabled record_created workflow adds to the latency of single-record writes. Run states are read from the
// service's database file (read-only), so watching progress puts no load on the service.
import Database from 'better-sqlite3';
import { batchBody, prng, record } from './data.js';
import { alternate, BATCH, createTable, log, timed, warm } from './harness.js';
import { send, sendJson, type Req, type Target } from './http-load.js';
import { fmt, type Row } from './report.js';

const SEED_W1 = 41;
const SEED_W2 = 42;

export interface WorkflowCtx {
  svc: Target;
  dbFile: string;
  rows: Row[];
  problems: string[];
}

/** A record_created workflow with one update_record node (sets status to "done") on `tableId`. */
async function createWorkflow(svc: Target, tableId: string, name: string): Promise<string> {
  const res = await sendJson(svc, {
    method: 'POST', path: '/api/v1/workflows', body: JSON.stringify({
      name, table_id: tableId, enabled: true, trigger: { type: 'record_created', config: {} },
      nodes: [{ id: 'set_status', type: 'update_record', config: { fields: { status: 'done' } } }],
    }),
  });
  return res.data.id as string;
}

/** Counts of a workflow's runs by status, from the database file. */
function runCounter(dbFile: string) {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  const byStatus = db.prepare('SELECT status, COUNT(*) AS n FROM workflow_runs WHERE workflow_id = ? GROUP BY status');
  return {
    counts(workflowId: string) {
      const out = { queued: 0, running: 0, success: 0, failed: 0 };
      for (const r of byStatus.all(workflowId) as Array<{ status: keyof typeof out; n: number }>) out[r.status] = r.n;
      return out;
    },
    firstError(workflowId: string): string | null {
      return (db.prepare(`SELECT error FROM workflow_runs WHERE workflow_id = ? AND status = 'failed' LIMIT 1`).pluck().get(workflowId) as string | undefined) ?? null;
    },
    close: () => db.close(),
  };
}

/** Polls until the workflow has no queued or running run (or `maxSeconds` pass); returns the seconds waited. */
async function drain(counter: ReturnType<typeof runCounter>, workflowId: string, maxSeconds: number): Promise<{ seconds: number; left: number }> {
  const started = performance.now();
  for (;;) {
    const c = counter.counts(workflowId);
    const left = c.queued + c.running;
    const seconds = (performance.now() - started) / 1000;
    if (left === 0 || seconds > maxSeconds) return { seconds, left };
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * W1: `n` records created in batches of 1000 on a table with a record_created → update_record workflow; the figure
 * is runs completed per second, from the first write until every run finished.
 */
export async function workflowThroughput(ctx: WorkflowCtx, n: number, maxSeconds: number) {
  log(`W1. workflow runs: ${n.toLocaleString('en-US')} records in batches of ${BATCH} into a table with a record_created → update_record workflow…`);
  const tableId = await createTable(ctx.svc, 'bench_wf_runs');
  const workflowId = await createWorkflow(ctx.svc, tableId, 'bench W1 set status');
  const r = prng(SEED_W1);
  const bodies: string[] = [];
  for (let i = 0; i < n; i += BATCH) bodies.push(batchBody(r, Math.min(BATCH, n - i)));
  const counter = runCounter(ctx.dbFile);
  try {
    let writesDone = 0;
    let done = { seconds: 0, left: 0 };
    let counts = counter.counts(workflowId);
    await timed('W1. workflow runs', async () => {
      const started = performance.now();
      for (const body of bodies) {
        const res = await send(ctx.svc, { method: 'POST', path: `/api/v1/tables/${tableId}/records/batch`, body });
        if (res.status !== 200) throw new Error(`W1 batch → ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
      }
      writesDone = (performance.now() - started) / 1000;
      // Every run is queued in the write's own transaction, so all n exist now; wait until none is queued or running.
      const rest = await drain(counter, workflowId, maxSeconds);
      done = { seconds: (performance.now() - started) / 1000, left: rest.left };
      counts = counter.counts(workflowId);
    });
    const finished = counts.success + counts.failed;
    if (done.left > 0) ctx.problems.push(`W1: ${done.left} runs still queued or running after ${maxSeconds} s`);
    if (counts.failed) ctx.problems.push(`W1: ${counts.failed} runs failed, e.g. ${counter.firstError(workflowId)}`);
    if (finished !== n) ctx.problems.push(`W1: expected ${n} runs, found ${finished} finished (${JSON.stringify(counts)})`);
    // The node really ran: every record now reads status "done".
    const check = await sendJson(ctx.svc, { method: 'GET', path: `/api/v1/tables/${tableId}/records?page_size=1&filter=${encodeURIComponent(JSON.stringify({ conjunction: 'and', conditions: [{ field: 'status', operator: 'eq', value: 'done' }] }))}` });
    if (check.data.total !== n) ctx.problems.push(`W1: ${check.data.total} of ${n} records have status "done" after the runs`);
    const rate = counts.success / done.seconds;
    log(`   ${counts.success} runs succeeded in ${fmt(done.seconds)} s (writes took ${fmt(writesDone)} s): ${fmt(rate)} runs/s`);
    ctx.rows.push({
      id: 'W1', workload: `workflow runs completed, record_created → update_record (${n.toLocaleString('en-US')} records, batches of ${BATCH})`, unit: 'runs/s',
      service: rate, baseline: null, ratio: null, target: '>= 500 runs/s', pass: rate >= 500 && counts.success === n,
      details: { runs: counts, seconds: done.seconds, writeSeconds: writesDone },
    });
  } finally {
    counter.close();
  }
}

/**
 * W2: p95 of single-record creates (4 connections) on a table without workflows vs a table of the same shape with an
 * enabled record_created → update_record workflow, in alternating slices. After each slice on the workflow table the
 * bench waits (unmeasured) until its queued runs are done, so the other side never runs beside leftover runs.
 */
export async function workflowWriteLatency(ctx: WorkflowCtx, seconds: number) {
  const concurrency = 4;
  log(`W2. single-record creates, ${concurrency} connections: table without workflow vs with a record_created → update_record workflow…`);
  const plain = await createTable(ctx.svc, 'bench_wf_plain');
  const withWf = await createTable(ctx.svc, 'bench_wf_on');
  const workflowId = await createWorkflow(ctx.svc, withWf, 'bench W2 set status');
  const r = prng(SEED_W2);
  const bodies = Array.from({ length: 2000 }, () => JSON.stringify({ fields: record(r) }));
  const write = (tableId: string) => (i: number): Req => ({ method: 'POST', path: `/api/v1/tables/${tableId}/records`, body: bodies[i % bodies.length] });
  const counter = runCounter(ctx.dbFile);
  try {
    const drains: Array<{ seconds: number; left: number }> = [];
    await warm(ctx.svc, write(plain), 200, concurrency);
    await warm(ctx.svc, write(withWf), 200, concurrency);
    await drain(counter, workflowId, 120);
    const m = await alternate(
      { t: ctx.svc, next: write(plain), label: 'W2. single creates, no workflow' },
      { t: ctx.svc, next: write(withWf), label: 'W2. single creates, with workflow' },
      {
        concurrency, seconds, maxRequests: 1_000_000,
        after: async (side) => {
          if (side === 'b') drains.push(await timed('W2. runs left after the slice', () => drain(counter, workflowId, 120)));
        },
      },
    );
    const counts = counter.counts(workflowId);
    if (counts.failed) ctx.problems.push(`W2: ${counts.failed} runs failed, e.g. ${counter.firstError(workflowId)}`);
    if (drains.some((d) => d.left > 0)) ctx.problems.push('W2: runs were still queued 120 s after a slice');
    const ratio = m.b.p95 / m.a.p95;
    const drainSeconds = drains.reduce((a, d) => a + d.seconds, 0);
    log(`   p95 ${fmt(m.a.p95)} ms without, ${fmt(m.b.p95)} ms with the workflow; runs left after the workflow slices took ${fmt(drainSeconds)} s to finish`);
    ctx.rows.push({
      id: 'W2', workload: `single create p95, ${concurrency} conns: with record_created workflow vs without`, unit: 'ms p95',
      service: m.b.p95, baseline: m.a.p95, baselineLabel: 'no workflow', ratio, target: '<= 1.20x (20% slower)', pass: ratio <= 1.2,
      details: { service: m.b, baseline: m.a, runs: counts, drainSeconds },
    });
    ctx.rows.push({
      id: 'W2t', workload: `  same, creates/s (runs still queued at slice ends took ${fmt(drainSeconds)} s more)`, unit: 'req/s',
      service: m.b.rps, baseline: m.a.rps, baselineLabel: 'no workflow', ratio: m.b.rps / m.a.rps, target: '-', pass: true, info: true,
      details: { drains },
    });
  } finally {
    counter.close();
  }
}
