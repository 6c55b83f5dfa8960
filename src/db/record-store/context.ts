// What every part of the record store shares: SQL names of a table's objects, the dialect, and the statement cache.
import type Database from 'better-sqlite3';
import type { ColumnStorage, FieldDef, FieldType, SqlDialect } from '../../fields/field-type.js';

export const recordTable = (tableId: string) => `"rt_${tableId}"`;
export const column = (fieldId: string) => `"c_${fieldId}"`;
export const linkTable = (fieldId: string) => `"lnk_${fieldId}"`;
export const indexName = (fieldId: string) => `"ix_${fieldId}"`;
export const sortIndexName = (fieldId: string, dir: 'asc' | 'desc') => `"ixs${dir}_${fieldId}"`;
/** The keyword-search index of a table: FTS5 with the trigram tokenizer (substring matches), rowid = _seq. */
export const searchTable = (tableId: string) => `"fts_${tableId}"`;

/** A type whose value is a column of the record table (not a junction table, not one of the table's own columns). */
export function hasColumn(type: FieldType): type is FieldType & { storage: ColumnStorage } {
  return type.storage !== 'link' && type.storage !== 'system';
}

/** The value of a field with a column or a system column, in a query over the record table aliased `t`. */
export function valueExpr(field: FieldDef, type: FieldType): string {
  return type.storage === 'system' ? `t.${type.systemColumn}` : `t.${column(field.id)}`;
}

export interface StoreContext {
  sqlite: Database.Database;
  dialect: SqlDialect;
  /** A prepared statement, cached by its text; a schema change alters the text of every statement that it affects. */
  stmt(sql: string): Database.Statement;
  /**
   * Drops the cached statements of every connection to the database (after a schema change that leaves statement
   * texts as they were).
   */
  forgetStatements(): void;
  /** Drops this connection's cached statements. */
  clearStatements(): void;
}

export function createContext(sqlite: Database.Database, dialect: SqlDialect, forgetAll: () => void): StoreContext {
  const statements = new Map<string, Database.Statement>();
  return {
    sqlite,
    dialect,
    stmt(sql) {
      let s = statements.get(sql);
      if (!s) {
        if (statements.size > 1000) statements.clear();
        s = sqlite.prepare(sql);
        statements.set(sql, s);
      }
      return s;
    },
    forgetStatements: forgetAll,
    clearStatements: () => statements.clear(),
  };
}
