// The PostgreSQL record store: the shared record store (record-store/) over a pg Pool or one transaction's PoolClient,
// each base's user tables in a schema of its own (contract section 11).
import pg from 'pg';
import { pgDialect } from './pg-dialect.js';
import { createRecordStore } from './record-store/index.js';
import type { SqlClient } from './sql-client.js';
import type { RecordStore } from './store.js';

const INT8 = 20;
const JSONB = 3802;

/**
 * This store's own reading of values, per query rather than pg's global parsers (which the rest of the process shares):
 * BIGINT (`_seq`, integer columns, COUNT) as a JS number, as SQLite gives it; `jsonb` as the JSON text SQLite stores,
 * exactly as JSON.stringify wrote it, for the field types to parse.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return (v: string) => Number(v);
    if (oid === JSONB) return (v: string) => JSON.stringify(JSON.parse(v));
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** What runs the queries: a pg Pool (reads outside transactions) or the PoolClient of one transaction. */
export interface PgQueryable {
  query: pg.Pool['query'];
}

/**
 * The record store over `db`; `prefixOf` gives a table's schema prefix (`"b_<base id>".`, pgDialect.baseSchema and a
 * dot), looked up from the table's id.
 */
export function createPgRecordStore(db: PgQueryable, prefixOf: (tableId: string) => Promise<string>): RecordStore {
  const query = (text: string, values?: readonly unknown[]) =>
    db.query({ text, values: values as unknown[] | undefined, rowMode: 'array', types });
  const client: SqlClient = {
    dialect: pgDialect,
    rows: async (sql, params) => (await query(sql, params)).rows as unknown[][],
    run: async (sql, params) => void (await query(sql, params)),
    exec: async (sql) => void (await db.query(sql)),
    tablePrefix: prefixOf,
    rowsPerInsert: 100,
    // Statements are unnamed: PostgreSQL plans each anew, so a schema change leaves no stale plan behind.
    forgetStatements: () => {},
  };
  return createRecordStore(client);
}
