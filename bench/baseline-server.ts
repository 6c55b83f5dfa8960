// The raw baseline the bench compares the service with: plain node:http + better-sqlite3 running the service's own SQL.
// It reads the service's database read-only (record lists) and writes batches into a scratch database with the
// service's own DDL for the table (copied from sqlite_master), so a figure's ratio shows what the service's layers
// (auth, GraphQL execution, validation, mapping) cost.
// No auth, no validation, field definitions cached: this is the ceiling, not a competing implementation.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { columnFields, fromStored, getManySql, insertSql, listSql, searchInsertSql, toStored, type FieldMeta } from './sql.js';

const DB = process.env.BASELINE_DB!;
const SCRATCH = process.env.BASELINE_SCRATCH_DB!;
const PORT = Number(process.env.PORT);
const HOST = process.env.HOST ?? '127.0.0.1';

// Same page cache as src/db/connection.ts, so neither side gets more memory than the other.
const db = new Database(DB, { readonly: true, fileMustExist: true });
db.pragma('cache_size = -65536');
// Two scratch databases: one mirrors the service's DDL fully, the other leaves out the keyword-search table, so the
// bench can show what that index costs a write (batch ?search=0).
function openScratch(file: string) {
  const s = new Database(file);
  s.pragma('journal_mode = WAL');
  s.pragma('synchronous = NORMAL');
  s.pragma('cache_size = -65536');
  return s;
}
const scratchDbs = { full: openScratch(SCRATCH), nosearch: openScratch(`${SCRATCH}.nosearch`) };

const fieldsOf = new Map<string, Array<FieldMeta & { indexed: boolean }>>();
function fields(tableId: string) {
  let f = fieldsOf.get(tableId);
  if (!f) {
    f = (db.prepare('SELECT id, name, type, options, indexed FROM fields WHERE table_id = ? ORDER BY position').all(tableId) as any[])
      .map((r) => ({ id: r.id, name: r.name, type: r.type, options: r.options ? JSON.parse(r.options) : null, indexed: r.indexed === 1 }));
    if (!f.length) throw Object.assign(new Error(`table ${tableId} has no fields`), { status: 404 });
    fieldsOf.set(tableId, f);
  }
  return f;
}

// Prepared statements cached by text, as record-store stmt() does.
const statements = new Map<Database.Database, Map<string, Database.Statement>>();
function stmt(conn: Database.Database, sql: string) {
  let m = statements.get(conn);
  if (!m) statements.set(conn, (m = new Map()));
  let s = m.get(sql);
  if (!s) m.set(sql, (s = conn.prepare(sql)));
  return s;
}

function toRecord(fs: FieldMeta[], cols: FieldMeta[], r: unknown[]) {
  const byId: Record<string, unknown> = {};
  for (let i = 0; i < cols.length; i++) byId[cols[i].id] = r[6 + i];
  const out: Record<string, unknown> = {};
  for (const f of fs) out[f.name] = fromStored(f, byId[f.id]);
  return { id: r[1], fields: out, created_at: r[2], updated_at: r[3] };
}

function list(tableId: string, url: URL) {
  const fs = fields(tableId);
  const page = Number(url.searchParams.get('page') ?? 1);
  const pageSize = Math.min(Number(url.searchParams.get('page_size') ?? 20), 1000);
  const filter = url.searchParams.get('filter');
  const sort = url.searchParams.get('sort');
  const q = listSql(tableId, fs, { filter: filter ? JSON.parse(filter) : undefined, sort: sort ? JSON.parse(sort) : undefined });
  const rows = stmt(db, q.pageSql).raw().all(...q.params, pageSize, (page - 1) * pageSize) as unknown[][];
  const total = stmt(db, q.countSql).pluck().get(...q.params) as number;
  const cols = columnFields(fs);
  return { code: 0, msg: 'success', data: { items: rows.map((r) => toRecord(fs, cols, r)), total, page, page_size: pageSize } };
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function newId(): string {
  const bytes = randomBytes(16);
  let out = 'rec';
  for (let i = 0; i < 16; i++) out += ALPHABET[bytes[i] % 62];
  return out;
}

/**
 * Gives the scratch database the service's own DDL for a table: the record table as it stands after its ALTERs,
 * every index on it, and the keyword-search table when the service has one, so inserts maintain the same structures.
 * Returns whether there is a search table to fill.
 */
function copySchema(scratch: Database.Database, tableId: string, search: boolean): boolean {
  const objects = (db.prepare(`SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND (tbl_name = ? OR name = ?)
    ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END`).all(`rt_${tableId}`, `fts_${tableId}`) as Array<{ type: string; name: string; sql: string }>)
    .filter((o) => search || o.name !== `fts_${tableId}`);
  for (const o of objects) scratch.exec(o.sql);
  return objects.some((o) => o.name === `fts_${tableId}`);
}

const scratchReady = new Map<string, boolean>();
/** Batch create into the scratch copy: one transaction, insert each row, read the page back by id, as the service does. */
function batchCreate(tableId: string, body: { action: string; records: Array<{ fields: Record<string, unknown> }> }, search: boolean) {
  if (body.action !== 'create') throw Object.assign(new Error('baseline supports only action "create"'), { status: 400 });
  const fs = fields(tableId);
  const scratch = search ? scratchDbs.full : scratchDbs.nosearch;
  const key = `${search}:${tableId}`;
  if (!scratchReady.has(key)) scratchReady.set(key, copySchema(scratch, tableId, search));
  const withSearch = scratchReady.get(key)!;
  const cols = columnFields(fs);
  const byName = new Map(fs.map((f) => [f.name, f]));
  const colIndex = new Map(cols.map((f, i) => [f.id, i]));
  const ins = stmt(scratch, insertSql(tableId, fs));
  const at = new Date().toISOString();
  const ids: string[] = [];
  const items = scratch.transaction(() => {
    const args: unknown[] = new Array(5 + cols.length);
    for (const rec of body.records) {
      const id = newId();
      ids.push(id);
      args.fill(null);
      args[0] = id; args[1] = at; args[2] = at;
      for (const [name, value] of Object.entries(rec.fields ?? {})) {
        const f = byName.get(name);
        if (!f) throw Object.assign(new Error(`unknown field "${name}"`), { status: 400 });
        args[5 + colIndex.get(f.id)!] = toStored(f, value);
      }
      ins.run(args);
    }
    if (withSearch) {
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        stmt(scratch, searchInsertSql(tableId, fs, chunk.length)).run(chunk);
      }
    }
    const out: Array<ReturnType<typeof toRecord>> = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const raw = stmt(scratch, getManySql(tableId, fs, chunk.length)).raw().all(chunk) as unknown[][];
      for (const r of raw) out.push(toRecord(fs, cols, r));
    }
    const order = new Map(ids.map((id, i) => [id, i]));
    return out.sort((a, b) => order.get(a.id as string)! - order.get(b.id as string)!);
  }).immediate();
  return { code: 0, msg: 'success', data: { items } };
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const LIST = /^\/api\/v1\/tables\/([A-Za-z0-9]+)\/records$/;
const BATCH = /^\/api\/v1\/tables\/([A-Za-z0-9]+)\/records\/batch$/;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const url = new URL(req.url ?? '/', 'http://baseline');
      let m: RegExpExecArray | null;
      if (url.pathname === '/healthz') return send(res, 200, { status: 'ok' });
      if (req.method === 'GET' && (m = LIST.exec(url.pathname))) return send(res, 200, list(m[1], url));
      if (req.method === 'POST' && (m = BATCH.exec(url.pathname))) {
        return send(res, 200, batchCreate(m[1], JSON.parse(Buffer.concat(chunks).toString('utf8')), url.searchParams.get('search') !== '0'));
      }
      send(res, 404, { code: 404, msg: `Nothing at ${url.pathname}`, data: null });
    } catch (e) {
      const err = e as Error & { status?: number };
      send(res, err.status ?? 500, { code: err.status ?? 500, msg: err.message, data: null });
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(PORT, HOST, () => console.log(`baseline listening on http://${HOST}:${PORT}`));

function shutdown() {
  server.close();
  db.close();
  scratchDbs.full.close();
  scratchDbs.nosearch.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
