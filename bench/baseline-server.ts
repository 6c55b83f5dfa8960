// The raw baseline the bench compares the service with: plain node:http + better-sqlite3 running the service's own SQL.
// It reads the service's database read-only (record lists) and writes batches into a scratch database with the
// service's own DDL for the table (copied from sqlite_master), so a figure's ratio shows what the service's layers
// (auth, GraphQL execution, validation, mapping) cost.
// No auth, no validation, field definitions cached: this is the ceiling, not a competing implementation.
// It also serves the Open API list and search in the open envelope (search as a plain LIKE scan, without the
// service's trigram index) and the OAuth token endpoint doing the same work as the service's (secret hash compare,
// EdDSA JWT signing with jose, one INSERT), for the OAuth/Open API workloads T1, T2 and T4.
import http from 'node:http';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import Database from 'better-sqlite3';
import { generateKeyPair, SignJWT } from 'jose';
import { columnFields, fromStored, getManySql, insertSql, likeSearchSql, listSql, searchInsertSql, toStored, type FieldMeta } from './sql.js';
import { newId } from '../src/ids.js';

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
    f = (db.prepare('SELECT id, name, type, options, config, indexed FROM fields WHERE table_id = ? ORDER BY position').all(tableId) as any[])
      .map((r) => ({
        id: r.id, name: r.name, type: r.type, options: r.options ? JSON.parse(r.options) : null, indexed: r.indexed === 1,
        resultType: JSON.parse(r.config ?? '{}').result_type,
      }));
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

/** A row's stored values by field id (the columns after the 6 system columns). */
function storedValues(cols: FieldMeta[], r: unknown[]): Record<string, unknown> {
  const byId: Record<string, unknown> = {};
  for (let i = 0; i < cols.length; i++) byId[cols[i].id] = r[6 + i];
  return byId;
}

function toRecord(fs: FieldMeta[], cols: FieldMeta[], r: unknown[], byId = storedValues(cols, r)) {
  const out: Record<string, unknown> = {};
  for (const f of fs) out[f.name] = fromStored(f, byId[f.id]);
  return { id: r[1], fields: out, created_at: r[2], updated_at: r[3] };
}

/** An Open API record: values keyed by field id. */
function toOpenRecord(fs: FieldMeta[], cols: FieldMeta[], r: unknown[]) {
  const byId: Record<string, unknown> = {};
  for (let i = 0; i < cols.length; i++) byId[cols[i].id] = r[6 + i];
  const values: Record<string, unknown> = {};
  for (const f of fs) values[f.id] = fromStored(f, byId[f.id]);
  return { id: r[1], values, created_at: r[2], updated_at: r[3] };
}

/** The open family's page envelope. */
function openPage(fs: FieldMeta[], rows: unknown[][], total: number, page: number, perPage: number) {
  const cols = columnFields(fs);
  return {
    code: 0, message: 'success', data: rows.map((r) => toOpenRecord(fs, cols, r)),
    pagination: { page, per_page: perPage, total, pages: Math.ceil(total / perPage) }, request_id: randomUUID(),
  };
}

function pageParams(url: URL) {
  const page = Number(url.searchParams.get('page') ?? 1);
  const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 20), 200);
  return { page, perPage };
}

/** GET /api/open/v1/bases/{base}/tables/{table}/records: the v1 list's SQL, keyed by field id, open envelope. */
function openList(tableId: string, url: URL) {
  const fs = fields(tableId);
  const { page, perPage } = pageParams(url);
  const filter = url.searchParams.get('filter');
  const sort = url.searchParams.get('sort');
  const q = listSql(tableId, fs, { filter: filter ? JSON.parse(filter) : undefined, sort: sort ? JSON.parse(sort) : undefined });
  const rows = stmt(db, q.pageSql).raw().all(...q.params, perPage, (page - 1) * perPage) as unknown[][];
  const total = stmt(db, q.countSql).pluck().get(...q.params) as number;
  return openPage(fs, rows, total, page, perPage);
}

/** GET .../records/search?q=: the plain LIKE scan of the searchable columns (no index), open envelope. */
function openSearch(tableId: string, url: URL) {
  const fs = fields(tableId);
  const { page, perPage } = pageParams(url);
  const terms = [...new Set((url.searchParams.get('q') ?? '').trim().split(/\s+/).filter(Boolean))];
  if (!terms.length) throw Object.assign(new Error('q is required'), { status: 400 });
  const q = likeSearchSql(tableId, fs, terms);
  const rows = stmt(db, q.pageSql).raw().all(...q.params, perPage, (page - 1) * perPage) as unknown[][];
  const total = stmt(db, q.countSql).pluck().get(...q.params) as number;
  return openPage(fs, rows, total, page, perPage);
}

// ---- the OAuth token endpoint: client credentials by HTTP Basic, as the service's issueToken does it ----
const TOKEN_TTL = 7200;
const ISSUER = `http://${HOST}:${PORT}`;
const AUDIENCE = `${ISSUER}/api/open/v1`;
const signing = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
const signingKid = 'baseline';
interface AppEntry { id: string; clientId: string; secretHash: Buffer; scopes: string[]; isActive: boolean }
// Applications cached in memory, as the service does; read from the service's database on first use.
const appsByClientId = new Map<string, AppEntry | null>();
function appByClientId(clientId: string): AppEntry | null {
  let a = appsByClientId.get(clientId);
  if (a === undefined) {
    const row = db.prepare('SELECT id, client_id, secret_hash, scopes, is_active FROM apps WHERE client_id = ?').get(clientId) as
      { id: string; client_id: string; secret_hash: string; scopes: string; is_active: number } | undefined;
    a = row ? { id: row.id, clientId: row.client_id, secretHash: Buffer.from(row.secret_hash, 'hex'), scopes: JSON.parse(row.scopes), isActive: row.is_active === 1 } : null;
    appsByClientId.set(clientId, a);
  }
  return a;
}
let tokenInsert: Database.Statement | undefined;
function insertToken(): Database.Statement {
  if (!tokenInsert) {
    // The service's own DDL for app_tokens (and its index), in the scratch database.
    const ddl = db.prepare(`SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND tbl_name = 'app_tokens' ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END`).pluck().all() as string[];
    for (const sql of ddl) scratchDbs.full.exec(sql.replace(/^CREATE (TABLE|INDEX|UNIQUE INDEX) /, 'CREATE $1 IF NOT EXISTS '));
    tokenInsert = scratchDbs.full.prepare('INSERT INTO app_tokens (jti, app_id, scope, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)');
  }
  return tokenInsert;
}

class OAuthError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

async function issueToken(authorization: string | undefined, body: string) {
  const m = /^Basic\s+(\S+)$/i.exec(authorization?.trim() ?? '');
  if (!m) throw new OAuthError(401, 'invalid_client', 'HTTP Basic client authentication is required');
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
  const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
  const app = appByClientId(clientId);
  const given = createHash('sha256').update(secret).digest();
  const ok = timingSafeEqual(given, app ? app.secretHash : Buffer.alloc(32)) && !!app && app.isActive;
  if (!app || !ok) throw new OAuthError(401, 'invalid_client', 'Client authentication failed');
  const form = new URLSearchParams(body);
  if (form.get('grant_type') !== 'client_credentials') throw new OAuthError(400, 'unsupported_grant_type', 'use client_credentials');
  const scope = app.scopes.join(' ');
  const jti = randomUUID();
  const iat = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ sub: app.id, app_id: app.id, client_id: app.clientId, scope, token_type: 'app', jti })
    .setProtectedHeader({ alg: 'EdDSA', kid: signingKid, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + TOKEN_TTL)
    .sign(signing.privateKey);
  insertToken().run(jti, app.id, scope, new Date(iat * 1000).toISOString(), iat + TOKEN_TTL);
  return { access_token: token, token_type: 'Bearer', expires_in: TOKEN_TTL, scope };
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
  const values = rows.map((r) => storedValues(cols, r));
  addLinks(fs, rows, values);
  return { code: 0, msg: 'success', data: { items: rows.map((r, i) => toRecord(fs, cols, r, values[i])), total, page, page_size: pageSize } };
}

/** A page's link values into each row's stored values, one junction query per link field as the service's loadLinks. */
function addLinks(fs: FieldMeta[], rows: unknown[][], values: Array<Record<string, unknown>>) {
  if (!rows.length) return;
  const ids = rows.map((r) => r[1] as string);
  for (const f of fs) {
    if (f.type !== 'link') continue;
    const byId = new Map<string, string[]>();
    values.forEach((v, i) => { v[f.id] = []; byId.set(ids[i], v[f.id] as string[]); });
    const found = stmt(db, `SELECT src, dst FROM "lnk_${f.id}" WHERE src IN (${ids.map(() => '?').join(', ')}) ORDER BY src, pos`).raw().all(ids) as string[][];
    for (const [src, dst] of found) byId.get(src)!.push(dst);
  }
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
      const id = newId('rec');
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

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const LIST = /^\/api\/v1\/tables\/([A-Za-z0-9]+)\/records$/;
const BATCH = /^\/api\/v1\/tables\/([A-Za-z0-9]+)\/records\/batch$/;
const OPEN_LIST = /^\/api\/open\/v1\/bases\/[A-Za-z0-9_-]+\/tables\/([A-Za-z0-9]+)\/records$/;
const OPEN_SEARCH = /^\/api\/open\/v1\/bases\/[A-Za-z0-9_-]+\/tables\/([A-Za-z0-9]+)\/records\/search$/;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const url = new URL(req.url ?? '/', 'http://baseline');
      let m: RegExpExecArray | null;
      if (url.pathname === '/healthz') return send(res, 200, { status: 'ok' });
      if (req.method === 'GET' && (m = LIST.exec(url.pathname))) return send(res, 200, list(m[1], url));
      if (req.method === 'GET' && (m = OPEN_LIST.exec(url.pathname))) return send(res, 200, openList(m[1], url));
      if (req.method === 'GET' && (m = OPEN_SEARCH.exec(url.pathname))) return send(res, 200, openSearch(m[1], url));
      if (req.method === 'POST' && url.pathname === '/api/oauth/token') {
        issueToken(req.headers.authorization, Buffer.concat(chunks).toString('utf8')).then(
          (token) => send(res, 200, token, NO_STORE),
          (e: Error & { status?: number; code?: string }) => send(res, e.status ?? 500, { error: e instanceof OAuthError ? e.code : 'server_error', error_description: e.message }, NO_STORE),
        );
        return;
      }
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
