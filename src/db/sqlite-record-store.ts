// The SQLite record store: the one module that writes SQL for user tables (one table per user table, one column per
// field), synchronous inside (better-sqlite3) and asynchronous outside (RecordStore). The parts, one per concept, are in
// record-store/; the SQL that depends on a field's type comes from the type (src/fields/types/).
import type Database from 'better-sqlite3';
import { createContext } from './record-store/context.js';
import { recordReads } from './record-store/reads.js';
import { schemaChanges } from './record-store/schema.js';
import { searchIndex } from './record-store/search-index.js';
import { recordWrites } from './record-store/writes.js';
import { sqliteDialect } from './sqlite-dialect.js';
import type { RecordStore } from './store.js';

export { recordTable } from './record-store/context.js';

/** The record store over one connection; `forgetAll` drops the cached statements of every connection to the file. */
export function createSqliteRecordStore(sqlite: Database.Database, forgetAll: () => void): { records: RecordStore; forget(): void } {
  sqlite.function('unicode_lower', { deterministic: true }, (v: unknown) => (v == null ? null : String(v).toLowerCase()));
  const ctx = createContext(sqlite, sqliteDialect, forgetAll);
  const { markSearchDirty, ...search } = searchIndex(ctx);
  const sync = { ...schemaChanges(ctx), ...search, ...recordWrites(ctx, markSearchDirty), ...recordReads(ctx) };
  // Each step runs synchronously; the promise only gives it the shape every engine shares.
  const records = {} as Record<string, unknown>;
  for (const [name, step] of Object.entries(sync) as Array<[string, (...args: unknown[]) => unknown]>) {
    records[name] = async (...args: unknown[]) => step(...args);
  }
  records.forgetStatements = forgetAll;
  return { records: records as unknown as RecordStore, forget: ctx.clearStatements };
}
