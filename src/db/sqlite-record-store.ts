// The SQLite record store: the shared record store (record-store/) over a better-sqlite3 connection, whose statements
// run synchronously and are prepared once per text.
import type Database from 'better-sqlite3';
import { createRecordStore } from './record-store/index.js';
import type { SqlClient } from './sql-client.js';
import { sqliteDialect } from './sqlite-dialect.js';
import type { RecordStore } from './store.js';

export { recordTable } from './record-store/context.js';

/** The record store over one connection; `forgetAll` drops the cached statements of every connection to the file. */
export function createSqliteRecordStore(sqlite: Database.Database, forgetAll: () => void): { records: RecordStore; forget(): void } {
  // Case folding beyond ASCII for short search terms, as the FTS5 trigram tokenizer folds (sqliteDialect.search).
  sqlite.function('unicode_lower', { deterministic: true }, (v: unknown) => (v == null ? null : String(v).toLowerCase()));
  const statements = new Map<string, Database.Statement>();
  /** A prepared statement, cached by its text; a schema change alters the text of every statement that it affects. */
  function stmt(sql: string): Database.Statement {
    let s = statements.get(sql);
    if (!s) {
      if (statements.size > 1000) statements.clear();
      s = sqlite.prepare(sql);
      statements.set(sql, s);
    }
    return s;
  }
  // Each call runs synchronously; the promise only gives it the shape every engine shares.
  const client: SqlClient = {
    dialect: sqliteDialect,
    rows: async (sql, params = []) => stmt(sql).raw(true).all(params) as unknown[][],
    run: async (sql, params = []) => void stmt(sql).run(params),
    exec: async (sql) => void sqlite.exec(sql),
    tablePrefix: async () => '',
    rowsPerInsert: 1,
    forgetStatements: forgetAll,
  };
  return { records: createRecordStore(client), forget: () => statements.clear() };
}
