// Copies a whole SQLite installation into an empty PostgreSQL database (contract section 11, `npm run db:copy`): the
// service's tables row for row, the user tables with their sequence numbers, links and indexes, and the signing keys,
// so every id, token and signed URL stays valid. One read transaction on SQLite, one write transaction on PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { is } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { FieldDef } from '../fields/field-type.js';
import { typeOfField } from '../fields/registry.js';
import * as pgSchema from './pg-schema.js';
import { openPgStore } from './pg-store.js';
import { createPgRecordStore } from './pg-record-store.js';
import { pgDialect } from './pg-dialect.js';
import { ANSWER_FILE } from './sqlite-answer-file.js';
import { hasColumn, linkTable, recordTable } from './record-store/context.js';

/** A problem meant for the operator; the target is left as it was. */
export class CopyError extends Error {}

export interface CopyProgress {
  /** Rows copied so far, out of `total`. */
  done: number;
  total: number;
  /** What is being copied now, e.g. `table tbl... (records)`. */
  what: string;
}

/** The service's tables in an order that satisfies their foreign keys, with the logs SQLite orders by rowid. */
const TABLES: Array<{ table: PgTable; insertionOrder?: boolean }> = [
  { table: pgSchema.users }, { table: pgSchema.revokedTokens }, { table: pgSchema.bases }, { table: pgSchema.baseMembers },
  { table: pgSchema.tables }, { table: pgSchema.fields }, { table: pgSchema.apps }, { table: pgSchema.appTokens, insertionOrder: true },
  { table: pgSchema.auditLog, insertionOrder: true }, { table: pgSchema.workflows }, { table: pgSchema.workflowRuns, insertionOrder: true },
  { table: pgSchema.plugins }, { table: pgSchema.pluginVersions }, { table: pgSchema.pluginFiles }, { table: pgSchema.pluginConfigs },
  { table: pgSchema.pluginInstallations }, { table: pgSchema.pluginStorage }, { table: pgSchema.pluginRuns, insertionOrder: true },
  { table: pgSchema.events }, { table: pgSchema.idempotencyKeys }, { table: pgSchema.webhooks }, { table: pgSchema.webhookDeliveries },
  { table: pgSchema.jobs, insertionOrder: true }, { table: pgSchema.views }, { table: pgSchema.trash }, { table: pgSchema.attachments },
];
/**
 * The service's tables that are not copied: the search index is rebuilt from the records by the server's background
 * indexer, the keys come from DATA_DIR's files (SECRET_FILES), rate-limit windows and login failures are short-lived,
 * and the write version's one row is the migration's own.
 */
export const NOT_COPIED = ['search_state', 'search_dirty', 'service_keys', 'rate_hits', 'login_failures', 'write_version'];
/** Every table of the PostgreSQL schema: each must be copied or named in NOT_COPIED (a test checks). */
export const SERVICE_TABLES = (Object.values(pgSchema) as unknown[]).filter((v): v is PgTable => is(v, PgTable)).map((t) => getTableConfig(t).name);
export const COPIED_TABLES = [...TABLES.map((t) => getTableConfig(t.table).name), 'attachment_chunks'];
/** Where the SQLite installation keeps its secrets (sqlite-store.ts), and their names in `service_keys`. */
const SECRET_FILES = { 'signing-key': 'signing-key.json', 'url-signing-key': 'url-signing.key' } as const;
const BATCH = 500;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Refuses a target that holds anything but the service's own empty tables (a failed copy leaves those). */
async function checkEmpty(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ schema: string; name: string }>(`SELECT table_schema AS schema, table_name AS name
    FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`);
  const ours = new Set([...SERVICE_TABLES, '__drizzle_migrations']);
  const foreign = rows.filter((r) => !ours.has(r.name) || !['public', 'drizzle'].includes(r.schema));
  if (foreign.length) {
    throw new CopyError(`The target database is not empty: it holds ${foreign.length} table(s) the service does not own (${foreign.slice(0, 3)
      .map((r) => `${r.schema}.${r.name}`).join(', ')}${foreign.length > 3 ? ', ...' : ''}). db:copy writes only into an empty database; nothing was changed.`);
  }
  if (rows.some((r) => r.name === 'users' && r.schema === 'public')) {
    const { rows: users } = await client.query<{ n: string }>('SELECT count(*) AS n FROM public.users');
    if (Number(users[0].n) > 0) throw new CopyError('The target database is not empty: it already holds a table service installation (users exist). db:copy writes only into an empty database; nothing was changed.');
  }
}

/** Inserts `rows` (arrays in `columns` order) in batches; `overriding` keeps identity values as they were. */
async function insertRows(client: pg.PoolClient, table: string, columns: string[], rows: unknown[][], overriding: boolean) {
  for (let i = 0; i < rows.length; i += BATCH) {
    const chunk = rows.slice(i, i + BATCH);
    const params: unknown[] = [];
    const values = chunk.map((row) => `(${row.map((v) => `$${params.push(v)}`).join(', ')})`);
    await client.query(`INSERT INTO ${table} (${columns.map(quote).join(', ')})${overriding ? ' OVERRIDING SYSTEM VALUE' : ''} VALUES ${values.join(', ')}`, params);
  }
}

export async function copyToPostgres(opts: { sqliteFile: string; targetUrl: string; onProgress?: (p: CopyProgress) => void }) {
  if (!fs.existsSync(opts.sqliteFile)) throw new CopyError(`No database at ${opts.sqliteFile}: is DATA_DIR set to the server's data directory?`);
  const admin = new pg.Client({ connectionString: opts.targetUrl });
  try {
    await admin.connect();
  } catch (e) {
    throw new CopyError(`Cannot connect to ${redact(opts.targetUrl)}: ${(e as Error).message}`);
  }
  try {
    await checkEmpty(admin);
  } finally {
    await admin.end();
  }

  const source = new Database(opts.sqliteFile, { readonly: true, fileMustExist: true });
  // The kept Idempotency-Key answers are in a file of their own (sqlite-answer-file.ts); a server of an earlier version,
  // which kept them in the database, never made one.
  const answerFile = path.join(path.dirname(opts.sqliteFile), ANSWER_FILE);
  const answers = fs.existsSync(answerFile) ? new Database(answerFile, { readonly: true, fileMustExist: true }) : undefined;
  const sourceOf = (table: string) => (table === 'idempotency_keys' && answers) || source;
  const store = await openPgStore(opts.targetUrl, { poolSize: 2 });
  const client = await store.pool.connect();
  try {
    source.exec('BEGIN'); // one snapshot of the source, while its server may go on writing
    answers?.exec('BEGIN');
    const userTables = source.prepare('SELECT id, base_id AS baseId FROM tables').all() as Array<{ id: string; baseId: string }>;
    const count = (sql: string, from = source) => from.prepare(sql).pluck().get() as number;
    let total = TABLES.reduce((n, t) => n + count(`SELECT count(*) FROM ${quote(getTableConfig(t.table).name)}`, sourceOf(getTableConfig(t.table).name)), 0);
    for (const t of userTables) total += count(`SELECT count(*) FROM ${recordTable(t.id)}`);
    let done = 0;
    const report = (what: string) => opts.onProgress?.({ done, total, what });

    await client.query('BEGIN');
    for (const { table, insertionOrder } of TABLES) {
      const config = getTableConfig(table);
      const columns = config.columns.filter((c) => c.name !== 'seq' || !insertionOrder);
      const names = columns.map((c) => c.name);
      const select = `SELECT ${insertionOrder ? 'rowid AS seq, ' : ''}${names.map(quote).join(', ')} FROM ${quote(config.name)} ORDER BY rowid`;
      const rows = (sourceOf(config.name).prepare(select).raw().all() as unknown[][]).map((row) => row.map((v, i) => {
        const c = columns[i - (insertionOrder ? 1 : 0)];
        return c?.columnType === 'PgBoolean' ? v === 1 : v;
      }));
      report(`${config.name}`);
      await insertRows(client, quote(config.name), insertionOrder ? ['seq', ...names] : names, rows, !!insertionOrder);
      if (insertionOrder) await client.query(`SELECT setval(pg_get_serial_sequence('${config.name}', 'seq'), GREATEST((SELECT max(seq) FROM ${quote(config.name)}), 1))`);
      done += rows.length;
      report(config.name);
    }
    // search_state and search_dirty are not copied: createTable starts each table's search index afresh, and the
    // server's background indexer builds it from the records.

    const records = createPgRecordStore(client, async (tableId) => {
      const t = userTables.find((u) => u.id === tableId);
      if (!t) throw new Error(`no such table: ${tableId}`);
      return `${pgDialect.baseSchema(t.baseId)}.`;
    });
    for (const t of userTables) {
      const prefix = `${pgDialect.baseSchema(t.baseId)}.`;
      const defs = (await client.query('SELECT id, table_id AS "tableId", name, type, required, options, config, indexed FROM fields WHERE table_id = $1 ORDER BY position', [t.id])).rows as FieldDef[];
      await records.createTable(t.id, t.baseId);
      for (const f of defs) await records.addField(t.id, f);
      const valueFields = defs.filter((f) => hasColumn(typeOfField(f)));
      const cols = ['_seq', '_id', '_created_at', '_updated_at', '_created_by', '_updated_by', ...valueFields.map((f) => `c_${f.id}`)];
      const select = source.prepare(`SELECT ${cols.map(quote).join(', ')} FROM ${recordTable(t.id)} WHERE _seq > ? ORDER BY _seq LIMIT 5000`).raw();
      for (let last = 0; ;) {
        const rows = select.all(last) as unknown[][];
        if (!rows.length) break;
        await insertRows(client, recordTable(t.id, prefix), cols, rows, true);
        last = rows[rows.length - 1][0] as number;
        done += rows.length;
        report(`table ${t.id} (records)`);
      }
      await client.query(`SELECT setval(pg_get_serial_sequence('${recordTable(t.id, prefix).replace(/'/g, "''")}', '_seq'), GREATEST((SELECT max(_seq) FROM ${recordTable(t.id, prefix)}), 1))`);
      for (const f of defs.filter((d) => typeOfField(d).storage === 'link')) {
        const links = source.prepare(`SELECT src, dst, pos FROM ${linkTable(f.id)}`).raw().all() as unknown[][];
        await insertRows(client, linkTable(f.id, prefix), ['src', 'dst', 'pos'], links, false);
      }
    }

    const dataDir = path.dirname(opts.sqliteFile);
    await copyAttachmentFiles(client, source, path.join(dataDir, 'files'), (what) => report(what));
    // The secrets, so tokens and signed URLs made before the copy stay valid.
    for (const [name, file] of Object.entries(SECRET_FILES)) {
      const full = path.join(dataDir, file);
      if (!fs.existsSync(full)) continue;
      await client.query('INSERT INTO service_keys (name, value, created_at) VALUES ($1, $2, $3)', [name, fs.readFileSync(full, 'utf8'), new Date().toISOString()]);
    }
    await client.query('COMMIT');
    report('done');
    return { rows: done, tables: userTables.length };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
    await store.close();
    source.close();
    answers?.close();
  }
}

/**
 * Moves the attachment files of DATA_DIR/files into `attachment_chunks`, 1 MiB per row read from the file as a stream
 * (a file is never whole in memory), so the PostgreSQL installation serves every file the SQLite one did.
 */
async function copyAttachmentFiles(client: pg.PoolClient, source: Database.Database, dir: string, report: (what: string) => void) {
  const ids = (source.prepare('SELECT id, thumbnails FROM attachments ORDER BY rowid').all() as Array<{ id: string; thumbnails: string | null }>);
  for (const a of ids) {
    for (const variant of a.thumbnails ? ['original', 'small', 'large'] : ['original']) {
      const file = path.join(dir, variant === 'original' ? a.id : `${a.id}.${variant}`);
      if (!fs.existsSync(file)) continue;
      let seq = 0;
      for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
        await client.query('INSERT INTO attachment_chunks (attachment_id, variant, seq, data) VALUES ($1, $2, $3, $4)', [a.id, variant, seq++, chunk]);
      }
    }
    report(`attachment ${a.id}`);
  }
}

/** A URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(a malformed URL)';
  }
}
