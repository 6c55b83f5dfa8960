// The record store: the one module that writes SQL for user tables (one table per user table, one column per field).
// Callers run these inside their own transaction; every function here is one step of a unit of work. The parts, one per
// concept, are in record-store/; the SQL that depends on a field's type comes from the type (src/fields/types/).
import type Database from 'better-sqlite3';
import { createContext } from './record-store/context.js';
import { recordReads } from './record-store/reads.js';
import { schemaChanges } from './record-store/schema.js';
import { searchIndex } from './record-store/search-index.js';
import { recordWrites } from './record-store/writes.js';
import { sqliteDialect } from './sqlite-dialect.js';

export type { Condition, ConditionGroup, RowWrite, SortKey, StoredRow } from './record-store/types.js';
export { recordTable } from './record-store/context.js';

export function createRecordStore(sqlite: Database.Database) {
  sqlite.function('unicode_lower', { deterministic: true }, (v: unknown) => (v == null ? null : String(v).toLowerCase()));
  const ctx = createContext(sqlite, sqliteDialect);
  const { markSearchDirty, ...search } = searchIndex(ctx);
  return {
    ...schemaChanges(ctx),
    ...search,
    ...recordWrites(ctx, markSearchDirty),
    ...recordReads(ctx),
    forgetStatements: ctx.forgetStatements,
  };
}

export type RecordStore = ReturnType<typeof createRecordStore>;
