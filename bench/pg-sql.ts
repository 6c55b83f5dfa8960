// Raw PostgreSQL SQL for the bench: the service's list, search, insert and read-back statements as it runs them on
// PostgreSQL (bench/sql.ts's hand copy with `$n` placeholders and the base's schema), the fields of a table, query
// plans, and the CPU meter of a PostgreSQL server on this machine. Not imported from src/, as bench/sql.ts explains.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { treeMeter, type CpuMeter } from './http-load.js';
import { columnFields, listSql, selectList, storageOf, type FieldMeta, type ListSql } from './sql.js';

const INT8 = 20;
const JSONB = 3802;
/** The service's reading of values (src/db/pg-record-store.ts): BIGINT as a JS number, jsonb as its JSON text. */
export const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return (v: string) => Number(v);
    if (oid === JSONB) return (v: string) => JSON.stringify(JSON.parse(v));
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** Rows as arrays, parsed as the service parses them. */
export async function rawRows(db: pg.Pool | pg.PoolClient | pg.Client, text: string, values: unknown[] = []): Promise<unknown[][]> {
  return (await db.query({ text, values, rowMode: 'array', types: PG_TYPES })).rows as unknown[][];
}

/** The schema of a base's user tables (pgDialect.baseSchema). */
export const baseSchema = (baseId: string) => `"b_${baseId}"`;

/** `?` placeholders as `$1, $2, ...`, and the record and search tables qualified with their base's schema. */
export function toPg(sql: string, schema: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`).replace(/(?<![.\w])"(rt|fts)_/g, `${schema}."$1_`);
}

/** The page and count statements of a v1 list, as the service runs them on PostgreSQL. */
export function pgListSql(schema: string, tableId: string, fields: FieldMeta[], q: { filter?: unknown; sort?: unknown }): ListSql {
  const s = listSql(tableId, fields, q, 'postgres');
  return { pageSql: toPg(s.pageSql, schema), countSql: toPg(s.countSql, schema), params: s.params };
}

/**
 * A keyword search as record-store search() runs it with pgDialect: the page of `seq`s and the count from the search
 * table (each term a LIKE on the lower-cased text, served by the trigram index), then the records of those `seq`s.
 */
export function pgSearchSql(schema: string, tableId: string, fields: FieldMeta[], terms: string[]) {
  const st = `${schema}."fts_${tableId}"`;
  const params = terms.map((t) => `%${t.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
  const where = params.map((_, i) => `text LIKE $${i + 1}`).join(' AND ');
  return {
    params,
    seqSql: `SELECT seq FROM ${st} WHERE ${where} ORDER BY seq LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    countSql: `SELECT COUNT(*) FROM ${st} WHERE ${where}`,
    bySeqSql: (n: number) => `SELECT ${selectList(fields)} FROM ${schema}."rt_${tableId}" t WHERE t._seq IN (${marks(n)}) ORDER BY t._seq`,
  };
}

const marks = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${from + i}`).join(',');

/** The record table's columns a batch insert writes, in the service's order. */
export function insertColumns(fields: FieldMeta[]): string[] {
  return ['_id', '_created_at', '_updated_at', '_created_by', '_updated_by', ...columnFields(fields).map((f) => `"c_${f.id}"`)];
}

const PG_TYPES_OF = { text: 'text', real: 'double precision', integer: 'bigint', json: 'jsonb' } as Record<string, string>;

/**
 * The service's batch INSERT on PostgreSQL (pgDialect.insertArrays): every row in one statement, one array parameter per
 * column, in insertColumns' order.
 */
export function pgInsertArraysSql(table: string, fields: FieldMeta[]): string {
  const types = ['text', 'text', 'text', 'text', 'text', ...columnFields(fields).map((f) => PG_TYPES_OF[storageOf(f.type)])];
  return `INSERT INTO ${table} (${insertColumns(fields).join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;
}

/** The read-back of record-store getMany() on PostgreSQL: every id in one array parameter. */
export const pgGetManyArraySql = (table: string, fields: FieldMeta[]) => `SELECT ${selectList(fields)} FROM ${table} t WHERE t._id = ANY($1::text[])`;

/** One multi-row INSERT of `rows` records into `table` (the SQL part of seeding, bench/pg-seed.ts). */
export function pgInsertSql(table: string, fields: FieldMeta[], rows: number): string {
  const cols = insertColumns(fields);
  const tuples = Array.from({ length: rows }, (_, r) => `(${marks(cols.length, 1 + r * cols.length)})`);
  return `INSERT INTO ${table} (${cols.join(', ')}) VALUES ${tuples.join(', ')}`;
}

/** A table's fields (as bench/sql.ts needs them) and the schema of its base, from the service's database. */
export async function pgTableMeta(db: pg.Pool | pg.Client, tableId: string): Promise<{ schema: string; fields: FieldMeta[] }> {
  const t = await db.query<{ base_id: string }>('SELECT base_id FROM tables WHERE id = $1', [tableId]);
  if (!t.rows.length) throw Object.assign(new Error(`table ${tableId} not found`), { status: 404 });
  const f = await db.query<FieldMeta>('SELECT id, name, type, options FROM fields WHERE table_id = $1 ORDER BY position', [tableId]);
  return { schema: baseSchema(t.rows[0].base_id), fields: f.rows };
}

/** EXPLAIN of the two statements of a list request, one line each, to explain a latency figure. */
export async function pgPlans(db: pg.Pool, s: ListSql, pageSize: number) {
  const plan = async (sql: string, params: unknown[]) =>
    (await db.query(`EXPLAIN (COSTS OFF) ${sql}`, params)).rows.map((r) => String(r['QUERY PLAN']).trim()).join('; ');
  return { page: await plan(s.pageSql, [...s.params, pageSize, 0]), count: await plan(s.countSql, s.params) };
}

/**
 * The CPU meter of the PostgreSQL server at `db` when it runs on this machine and its data directory is readable
 * (postmaster.pid names the postmaster, whose children are the backends); undefined otherwise.
 */
export async function postgresCpuMeter(db: pg.Pool): Promise<CpuMeter | undefined> {
  try {
    const dir = (await db.query<{ data_directory: string }>('SHOW data_directory')).rows[0].data_directory;
    const pid = Number(fs.readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return pid > 0 && fs.existsSync(`/proc/${pid}`) ? treeMeter(pid) : undefined;
  } catch {
    return undefined;
  }
}
