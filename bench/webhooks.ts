// WH: webhook deliveries to a loopback receiver: records created in batches on a table with a record.created webhook,
// the figure is deliveries received per second from the first write until the receiver holds every event. The
// receiver runs in the bench process (started before the service, whose PLUGIN_PROXY_ALLOW_PRIVATE lets it be reached)
// and checks a sample of the signatures with the Standard Webhooks reference library.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { batchBody, prng } from './data.js';
import { BATCH, createTable, log, timed } from './harness.js';
import { send, sendJson, type Target } from './http-load.js';
import { fmt, type Row } from './report.js';

const SEED_WH = 43;
/** Every n-th delivery's signature is verified (the reference library's HMAC is plain JavaScript: a sample keeps the receiver light). */
const VERIFY_EVERY = 50;

export interface Receiver {
  port: number;
  /** Distinct webhook-ids received, and when the last new one arrived. */
  ids: Set<string>;
  requests: number;
  lastAt: number;
  /** Set before the workload: the secret to verify samples with. */
  secret: string | null;
  badSignatures: number;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 that answers 204 to every POST and counts what it got. */
export async function startReceiver(): Promise<Receiver> {
  const r: Receiver = {
    port: 0, ids: new Set(), requests: 0, lastAt: 0, secret: null, badSignatures: 0,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  let verifier: Webhook | null = null;
  const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.requests++;
      const id = String(req.headers['webhook-id']);
      if (!r.ids.has(id)) {
        r.ids.add(id);
        r.lastAt = performance.now();
      }
      if (r.secret && r.requests % VERIFY_EVERY === 0) {
        verifier ??= new Webhook(r.secret);
        try {
          verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
        } catch {
          r.badSignatures++;
        }
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  return r;
}

export interface WebhookCtx {
  svc: Target;
  dbFile: string;
  rows: Row[];
  problems: string[];
}

/** Deliveries of a webhook by status, from the service's database file (read-only). */
function deliveryCounts(dbFile: string, webhookId: string): Record<string, number> {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const out: Record<string, number> = { pending: 0, delivered: 0, failed: 0 };
    for (const row of db.prepare('SELECT status, COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ? GROUP BY status').all(webhookId) as Array<{ status: string; n: number }>) out[row.status] = row.n;
    return out;
  } finally {
    db.close();
  }
}

/** WH: `n` records in batches of 1000 into a table whose record.created webhook points at `receiver`. */
export async function webhookThroughput(ctx: WebhookCtx, receiver: Receiver, n: number, maxSeconds: number) {
  log(`WH. webhook deliveries: ${n.toLocaleString('en-US')} records in batches of ${BATCH} into a table with a record.created webhook to a loopback receiver…`);
  const tableId = await createTable(ctx.svc, 'bench_webhooks');
  const created = await sendJson(ctx.svc, {
    method: 'POST', path: `/api/v1/bases/${(await sendJson(ctx.svc, { method: 'GET', path: `/api/v1/tables/${tableId}` })).data.base_id}/webhooks`,
    body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hook`, events: ['record.created'], table_id: tableId }),
  });
  if (!created.data?.id) throw new Error(`WH: creating the webhook failed: ${JSON.stringify(created).slice(0, 300)}`);
  receiver.secret = created.data.secret;
  const r = prng(SEED_WH);
  const bodies: string[] = [];
  for (let i = 0; i < n; i += BATCH) bodies.push(batchBody(r, Math.min(BATCH, n - i)));
  const before = receiver.ids.size;
  let writeSeconds = 0;
  let seconds = 0;
  await timed('WH. webhook deliveries', async () => {
    const started = performance.now();
    for (const body of bodies) {
      const res = await send(ctx.svc, { method: 'POST', path: `/api/v1/tables/${tableId}/records/batch`, body });
      if (res.status !== 200) throw new Error(`WH batch → ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
    }
    writeSeconds = (performance.now() - started) / 1000;
    while (receiver.ids.size - before < n && (performance.now() - started) / 1000 < maxSeconds) await new Promise((res) => setTimeout(res, 20));
    seconds = ((receiver.ids.size - before >= n ? receiver.lastAt : performance.now()) - started) / 1000;
  });
  const got = receiver.ids.size - before;
  // The delivery log is written after the answer: give the last outcomes a moment to be recorded.
  let counts = deliveryCounts(ctx.dbFile, created.data.id);
  for (let i = 0; i < 100 && counts.pending; i++) {
    await new Promise((res) => setTimeout(res, 50));
    counts = deliveryCounts(ctx.dbFile, created.data.id);
  }
  if (got < n) ctx.problems.push(`WH: the receiver got ${got} of ${n} events within ${maxSeconds} s`);
  if (counts.delivered !== n) ctx.problems.push(`WH: ${counts.delivered} of ${n} deliveries recorded delivered (${JSON.stringify(counts)})`);
  if (receiver.badSignatures) ctx.problems.push(`WH: ${receiver.badSignatures} sampled signatures did not verify`);
  const rate = got / seconds;
  log(`   ${got} events received in ${fmt(seconds)} s (writes took ${fmt(writeSeconds)} s, ${receiver.requests} requests): ${fmt(rate)} deliveries/s`);
  ctx.rows.push({
    id: 'WH', workload: `webhook deliveries to a loopback receiver (${n.toLocaleString('en-US')} record.created events, batches of ${BATCH})`, unit: 'dlv/s',
    service: rate, baseline: null, ratio: null, target: '>= 500 dlv/s', pass: rate >= 500 && got === n,
    details: { received: got, requests: receiver.requests, seconds, writeSeconds, counts },
  });
}
