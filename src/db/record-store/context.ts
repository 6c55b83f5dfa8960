// What every part of the record store shares: SQL names of a table's objects, the client and its dialect.
import type { ColumnStorage, FieldDef, FieldType } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import type { RecordDialect, SqlClient } from '../sql-client.js';

// `prefix` is the schema of the table's base (`"b_<base id>".` on PostgreSQL, empty on SQLite). Links never cross
// bases, so the junction tables of a table's links, and of links pointing at it, share its prefix.
export const recordTable = (tableId: string, prefix = '') => `${prefix}"rt_${tableId}"`;
export const linkTable = (fieldId: string, prefix = '') => `${prefix}"lnk_${fieldId}"`;
/** The keyword-search table of a record table (SearchDialect): keyed by `_seq`, one row per indexed record. */
export const searchTable = (tableId: string, prefix = '') => `${prefix}"fts_${tableId}"`;
export const column = (fieldId: string) => `"c_${fieldId}"`;
// Index names: unqualified where an index is created (it goes into its table's schema), prefixed where it is dropped.
export const indexName = (fieldId: string, prefix = '') => `${prefix}"ix_${fieldId}"`;
export const sortIndexName = (fieldId: string, dir: 'asc' | 'desc', prefix = '') => `${prefix}"ixs${dir}_${fieldId}"`;
export const linkDstIndexName = (fieldId: string) => `"lnkdst_${fieldId}"`;
export const searchIndexName = (tableId: string) => `"ftsix_${tableId}"`;

/** A type whose value is a column of the record table (not a junction table, not one of the table's own columns). */
export function hasColumn(type: FieldType): type is FieldType & { storage: ColumnStorage } {
  return type.storage !== 'link' && type.storage !== 'system';
}

export const isLink = (f: FieldDef) => typeOfField(f).storage === 'link';

/** The value of a field with a column or a system column, in a query over the record table aliased `t`. */
export function valueExpr(field: FieldDef, type: FieldType): string {
  return type.storage === 'system' ? `t.${type.systemColumn}` : `t.${column(field.id)}`;
}

/**
 * ORDER BY terms of a field's value `col` (record-query refuses keys on types that cannot be sorted). Lists sort by
 * them and indexed fields get an index that serves them (RecordDialect.sortIndexTerms).
 */
export function sortTermsOf(type: FieldType, col: string, dir: 'asc' | 'desc', d: RecordDialect): string {
  return type.sortTerms!(type.storage === 'json' ? d.jsonText(col) : col, dir === 'desc' ? 'DESC' : 'ASC', d);
}

/** Most parameters one statement binds: below SQLite's limit (32766) and PostgreSQL's (65535). */
export const MAX_PARAMS = 30_000;
/** Ids per `IN (...)` list. */
export const CHUNK = 500;

/** `items` in slices of at most `size`. */
export function* chunks<T>(items: readonly T[], size = CHUNK): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

export interface StoreContext {
  client: SqlClient;
  dialect: RecordDialect;
  /** The first column of the first row a query answers (a COUNT, a max). */
  scalar(sql: string, params?: readonly unknown[]): Promise<unknown>;
  /**
   * INSERT of `tuples` (each with `columns.length` values) into `table`: one statement of column arrays where the dialect
   * has insertArrays (`types` are the columns' SQL types), else `client.rowsPerInsert` rows per statement.
   * `scalarParameters` skips the arrays: for a few rows of long JSON text, which an array's text form would escape once
   * more (every quote) and the server parse twice.
   */
  insertRows(table: string, columns: string[], tuples: unknown[][], types: readonly string[], opts?: { scalarParameters?: boolean }): Promise<void>;
}

export function createContext(client: SqlClient): StoreContext {
  return {
    client,
    dialect: client.dialect,
    scalar: async (sql, params) => (await client.rows(sql, params))[0]?.[0],
    insertRows: (table, columns, tuples, types, opts) => insertRows(client, table, columns, tuples, types, opts?.scalarParameters ?? false),
  };
}

/**
 * A value as an element of a text-form array parameter: what pg's own conversion of a parameter gives, except that an
 * array is JSON too (as an element pg would nest it as a sub-array).
 */
const arrayElement = (v: unknown) => (v == null ? null : typeof v === 'object' ? JSON.stringify(v) : String(v));

/**
 * The INSERT texts of a column list (by identity), table and dialect (one process may hold stores of both engines, as
 * `db:copy` does), by rows per statement.
 */
const insertTexts = new WeakMap<string[], Map<number, string> & { table: string; dialect: RecordDialect }>();

async function insertRows(client: SqlClient, table: string, columns: string[], tuples: unknown[][], types: readonly string[], scalarParameters: boolean) {
  if (!tuples.length) return;
  const d = client.dialect;
  if (d.insertArrays && tuples.length > 1 && !scalarParameters) {
    // One round trip and one short statement for the whole batch, instead of one per slice of rows with a parameter each.
    const arrays = columns.map((_, c) => tuples.map((t) => arrayElement(t[c])));
    await client.run(d.insertArrays(table, columns, types), arrays);
    return;
  }
  const perStatement = Math.max(1, Math.min(client.rowsPerInsert, Math.floor(MAX_PARAMS / columns.length)));
  // The target columns type the values, so placeholders need no value; the text is built once per slice size, and kept
  // for the next call where the caller passes the same column list (a constant, as the event log's).
  let texts = insertTexts.get(columns);
  if (!texts || texts.table !== table || texts.dialect !== d) insertTexts.set(columns, (texts = Object.assign(new Map<number, string>(), { table, dialect: d })));
  const textOf = (rows: number) => {
    let sql = texts.get(rows);
    if (!sql) {
      let n = 0;
      const row = () => `(${columns.map(() => client.dialect.placeholder(++n)).join(', ')})`;
      sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array.from({ length: rows }, row).join(', ')}`;
      texts.set(rows, sql);
    }
    return sql;
  };
  if (perStatement === 1) {
    const sql = textOf(1);
    for (const t of tuples) await client.run(sql, t);
    return;
  }
  for (const slice of chunks(tuples, perStatement)) await client.run(textOf(slice.length), slice.flat());
}
