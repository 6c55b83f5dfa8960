// The raw PostgreSQL baseline: plain node:http + pg running the service's own PostgreSQL SQL (bench/pg-sql.ts) on the
// service's database, so a PostgreSQL figure's ratio shows what the service's layers (auth, GraphQL execution,
// validation, mapping) cost over the same queries. No auth, no validation, field definitions cached, the same pool size
// and driver settings as the service (unnamed statements, rows as arrays): the ceiling, not a competing implementation.
// Serves the v1 record list, batch create (into a copy of the record table in its own schema, `LIKE ... INCLUDING ALL`,
// so the service's table is never written), the Open API list and the Open API keyword search (the service's trigram-index SQL).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { insertColumns, pgGetManyArraySql, pgInsertArraysSql, pgListSql, pgSearchSql, pgTableMeta, rawRows } from './pg-sql.js';
import { columnFields, fromStored, toStored, type FieldMeta } from './sql.js';
import { newId } from '../src/ids.js';

const PORT = Number(process.env.PORT);
const HOST = process.env.HOST ?? '127.0.0.1';
const SCRATCH = '"bench_scratch"';

const pool = new pg.Pool({ connectionString: process.env.BASELINE_PG_URL, max: Number(process.env.BASELINE_POOL ?? 10) });
pool.on('error', (e) => console.error('pool connection failed:', e.message));

const metaOf = new Map<string, Promise<{ schema: string; fields: FieldMeta[] }>>();
function meta(tableId: string) {
  let m = metaOf.get(tableId);
  if (!m) {
    m = pgTableMeta(pool, tableId);
    m.catch(() => metaOf.delete(tableId));
    metaOf.set(tableId, m);
  }
  return m;
}

function byFieldId(fields: FieldMeta[], r: unknown[]) {
  const cols = columnFields(fields);
  const byId: Record<string, unknown> = {};
  for (let i = 0; i < cols.length; i++) byId[cols[i].id] = r[6 + i];
  return byId;
}

function toRecord(fields: FieldMeta[], r: unknown[]) {
  const byId = byFieldId(fields, r);
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f.name] = fromStored(f, byId[f.id]);
  return { id: r[1], fields: out, created_at: r[2], updated_at: r[3] };
}

/** An Open API record: values keyed by field id. */
function toOpenRecord(fields: FieldMeta[], r: unknown[]) {
  const byId = byFieldId(fields, r);
  const values: Record<string, unknown> = {};
  for (const f of fields) values[f.id] = fromStored(f, byId[f.id]);
  return { id: r[1], values, created_at: r[2], updated_at: r[3] };
}

/** GET /api/v1/tables/{id}/records: one page and the total, the service's two statements one after the other. */
async function list(tableId: string, url: URL) {
  const { schema, fields } = await meta(tableId);
  const page = Number(url.searchParams.get('page') ?? 1);
  const pageSize = Math.min(Number(url.searchParams.get('page_size') ?? 20), 1000);
  const filter = url.searchParams.get('filter');
  const sort = url.searchParams.get('sort');
  const q = pgListSql(schema, tableId, fields, { filter: filter ? JSON.parse(filter) : undefined, sort: sort ? JSON.parse(sort) : undefined });
  const rows = await rawRows(pool, q.pageSql, [...q.params, pageSize, (page - 1) * pageSize]);
  const total = (await rawRows(pool, q.countSql, q.params))[0][0] as number;
  return { code: 0, msg: 'success', data: { items: rows.map((r) => toRecord(fields, r)), total, page, page_size: pageSize } };
}

/** GET /api/open/v1/bases/{base}/tables/{table}/records: the v1 list's SQL, keyed by field id, open envelope. */
async function openList(tableId: string, url: URL) {
  const { schema, fields } = await meta(tableId);
  const page = Number(url.searchParams.get('page') ?? 1);
  const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 20), 200);
  const q = pgListSql(schema, tableId, fields, {});
  const rows = await rawRows(pool, q.pageSql, [...q.params, perPage, (page - 1) * perPage]);
  const total = (await rawRows(pool, q.countSql, q.params))[0][0] as number;
  return openPage(fields, rows, total, page, perPage);
}

/** The open family's page envelope. */
function openPage(fields: FieldMeta[], rows: unknown[][], total: number, page: number, perPage: number) {
  return {
    code: 0, message: 'success', data: rows.map((r) => toOpenRecord(fields, r)),
    pagination: { page, per_page: perPage, total, pages: Math.ceil(total / perPage) }, request_id: randomUUID(),
  };
}

/** GET .../records/search?q=: the service's search SQL (search table, trigram index), open envelope. */
async function openSearch(tableId: string, url: URL) {
  const { schema, fields } = await meta(tableId);
  const page = Number(url.searchParams.get('page') ?? 1);
  const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 20), 200);
  const terms = [...new Set((url.searchParams.get('q') ?? '').trim().split(/\s+/).filter(Boolean))];
  if (!terms.length) throw Object.assign(new Error('q is required'), { status: 400 });
  const s = pgSearchSql(schema, tableId, fields, terms);
  const seqs = (await rawRows(pool, s.seqSql, [...s.params, perPage, (page - 1) * perPage])).map((r) => r[0]);
  const total = (await rawRows(pool, s.countSql, s.params))[0][0] as number;
  const rows = seqs.length ? await rawRows(pool, s.bySeqSql(seqs.length), seqs) : [];
  return openPage(fields, rows, total, page, perPage);
}


/** The scratch copy of a record table: its columns, identity and indexes (`LIKE ... INCLUDING ALL`), made once. */
const scratchOf = new Map<string, Promise<string>>();
function scratchTable(tableId: string, schema: string): Promise<string> {
  let t = scratchOf.get(tableId);
  if (!t) {
    const name = `${SCRATCH}."rt_${tableId}"`;
    t = pool.query(`CREATE SCHEMA IF NOT EXISTS ${SCRATCH}; DROP TABLE IF EXISTS ${name}; CREATE TABLE ${name} (LIKE ${schema}."rt_${tableId}" INCLUDING ALL)`).then(() => name);
    scratchOf.set(tableId, t);
  }
  return t;
}

/**
 * Batch create into the scratch copy as the service does: one transaction, one INSERT of a parameter array per column
 * (elements converted by pg, as the service's are), then the records read back by id in one statement.
 */
async function batchCreate(tableId: string, body: { action: string; records: Array<{ fields: Record<string, unknown> }> }) {
  if (body.action !== 'create') throw Object.assign(new Error('baseline supports only action "create"'), { status: 400 });
  const { schema, fields } = await meta(tableId);
  const table = await scratchTable(tableId, schema);
  const cols = columnFields(fields);
  const width = insertColumns(fields).length;
  const byName = new Map(fields.map((f) => [f.name, f]));
  const colIndex = new Map(cols.map((f, i) => [f.id, i]));
  const at = new Date().toISOString();
  const ids: string[] = [];
  const tuples = body.records.map((rec) => {
    const id = newId('rec');
    ids.push(id);
    const args: unknown[] = new Array(width).fill(null);
    args[0] = id; args[1] = at; args[2] = at;
    for (const [name, value] of Object.entries(rec.fields ?? {})) {
      const f = byName.get(name);
      if (!f) throw Object.assign(new Error(`unknown field "${name}"`), { status: 400 });
      args[5 + colIndex.get(f.id)!] = toStored(f, value);
    }
    return args;
  });
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(pgInsertArraysSql(table, fields), Array.from({ length: width }, (_, c) => tuples.map((t) => t[c])));
    const out = (await rawRows(client, pgGetManyArraySql(table, fields), [ids])).map((r) => toRecord(fields, r));
    await client.query('COMMIT');
    const order = new Map(ids.map((id, i) => [id, i]));
    return { code: 0, msg: 'success', data: { items: out.sort((a, b) => order.get(a.id as string)! - order.get(b.id as string)!) } };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const LIST = /^\/api\/v1\/tables\/([A-Za-z0-9]+)\/records$/;
const BATCH = /^\/api\/v1\/tables\/([A-Za-z0-9]+)\/records\/batch$/;
const OPEN_LIST = /^\/api\/open\/v1\/bases\/[A-Za-z0-9_-]+\/tables\/([A-Za-z0-9]+)\/records$/;
const OPEN_SEARCH = /^\/api\/open\/v1\/bases\/[A-Za-z0-9_-]+\/tables\/([A-Za-z0-9]+)\/records\/search$/;

async function route(method: string, url: URL, body: () => string): Promise<[number, unknown]> {
  let m: RegExpExecArray | null;
  if (url.pathname === '/healthz') return [200, { status: 'ok' }];
  if (method === 'GET' && (m = LIST.exec(url.pathname))) return [200, await list(m[1], url)];
  if (method === 'GET' && (m = OPEN_LIST.exec(url.pathname))) return [200, await openList(m[1], url)];
  if (method === 'GET' && (m = OPEN_SEARCH.exec(url.pathname))) return [200, await openSearch(m[1], url)];
  if (method === 'POST' && (m = BATCH.exec(url.pathname))) return [200, await batchCreate(m[1], JSON.parse(body()))];
  return [404, { code: 404, msg: `Nothing at ${url.pathname}`, data: null }];
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://baseline');
    route(req.method ?? 'GET', url, () => Buffer.concat(chunks).toString('utf8')).then(
      ([status, body]) => send(res, status, body),
      (e: Error & { status?: number }) => send(res, e.status ?? 500, { code: e.status ?? 500, msg: e.message, data: null }),
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(PORT, HOST, () => console.log(`PostgreSQL baseline listening on http://${HOST}:${PORT}`));

function shutdown() {
  server.close();
  void pool.end().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 3000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
