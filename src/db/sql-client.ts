// What the record store runs its SQL through (one connection, or one transaction's connection, of either engine), the
// spellings it needs beyond the field types' (RecordDialect), and the parameter list of a statement being built.
// The SQLite client is in sqlite-record-store.ts, the PostgreSQL one in pg-record-store.ts.
import type { SqlDialect, SqlParams } from '../fields/field-type.js';

export interface SqlClient {
  readonly dialect: RecordDialect;
  /** The rows a query answers, each an array of its column values in select order (integers as JS numbers). */
  rows(sql: string, params?: readonly unknown[]): Promise<unknown[][]>;
  /** Runs one statement with parameters. */
  run(sql: string, params?: readonly unknown[]): Promise<void>;
  /** Runs one statement without parameters (DDL). */
  exec(sql: string): Promise<void>;
  /**
   * The schema the user tables of a base live in, as a prefix of their SQL names (`"b_<base id>".` on PostgreSQL,
   * empty on SQLite, whose file is one schema), found from the table's id.
   */
  tablePrefix(tableId: string): Promise<string>;
  /**
   * Rows one INSERT of a batch carries: 1 in process (SQLite runs one cached single-row statement fastest), more where
   * every statement is a round trip to a server.
   */
  readonly rowsPerInsert: number;
  /** Drops cached statement plans of every connection to the database (after a schema change); nothing where none are kept. */
  forgetStatements(): void;
}

/** The record store's spellings that differ between engines, beyond those the field types use. */
export interface RecordDialect extends SqlDialect {
  /**
   * The schema holding a base's user tables (a quoted SQL name), or null where an engine keeps every table in one
   * (SQLite). A table's `tablePrefix` is this followed by a dot.
   */
  baseSchema(baseId: string): string | null;
  /** The definition of the record table's `_seq` column: creation order, the primary key, never reused. */
  readonly seqColumn: string;
  /**
   * What a field's filter index holds after its column, so an equality filter reads its page in creation order from the
   * index: nothing on SQLite (an index already ends with the rowid, which `_seq` is), `, _seq` on PostgreSQL.
   */
  readonly filterIndexTail: string;
  /**
   * The terms of the index that serves a sort on ORDER BY `terms` (sortTermsOf a field's column `col`), before its
   * closing `, _seq`; null where the field's filter index already serves it.
   */
  sortIndexTerms(terms: string, col: string): string | null;
  /** What follows the column list of a junction table's CREATE TABLE (clustered on its primary key where possible). */
  readonly junctionTableOptions: string;
  /** An INSERT (`rest`: `(columns) VALUES ...` or `(columns) SELECT ...`) that skips rows whose key is taken. */
  insertOrIgnore(table: string, rest: string): string;
  /** A one-row INSERT that replaces the row with the same `key` columns. */
  insertOrReplace(table: string, columns: readonly string[], key: readonly string[], values: readonly string[]): string;
  /**
   * Where every statement is a round trip to a server (PostgreSQL): an INSERT of any number of rows taking one array
   * parameter per column (`$1`..`$n`, of SQL `types`), so a batch is one statement whose text never changes. Undefined
   * where one cached single-row statement per row is fastest (SQLite).
   */
  insertArrays?(table: string, columns: readonly string[], types: readonly string[]): string;
  /** The condition that `expr` is one of the values of the text array bound as `$n`; undefined where lists of placeholders are used. */
  inArray?(expr: string, n: number): string;
  /**
   * What ends a SELECT that locks the rows it reads until the transaction ends (` FOR UPDATE`), or nothing where a
   * transaction already excludes every other writer (SQLite).
   */
  readonly forUpdate: string;
  /** A `json` column as text that sorts as SQLite sorts the JSON text it stores (identity there). */
  jsonText(expr: string): string;
  readonly search: SearchDialect;
}

/**
 * The keyword-search table of a record table: one row per indexed record, keyed by its `_seq`, holding its search text
 * (searchable values joined by newlines); a record matches when every term is a case-insensitive substring of it.
 */
export interface SearchDialect {
  /** DDL creating the search table `table` and its index (`index`, an unqualified name). */
  create(table: string, index: string): string[];
  /** The column holding the record's `_seq`. */
  readonly key: string;
  /** The value stored for a record, from its search text expression. */
  stored(text: string): string;
  /** The condition that the row of `table` holds every term (terms as the user typed them, no whitespace). */
  match(table: string, terms: readonly string[], p: SqlParams): string;
}

/** Collects the values bound while a statement's text is built; `values` is passed to the statement in the same order. */
export class Params implements SqlParams {
  readonly values: unknown[] = [];
  constructor(readonly dialect: SqlDialect) {}
  bind(value: unknown): string {
    this.values.push(value);
    return this.dialect.placeholder(this.values.length, value);
  }
  bindAll(values: readonly unknown[]): string {
    return values.map((v) => this.bind(v)).join(',');
  }
}

