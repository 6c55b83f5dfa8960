// Schema changes of user tables: record tables, columns and junction tables of fields, and their indexes.
import type { FieldDef } from '../../fields/field-type.js';
import { fieldType } from '../../fields/registry.js';
import { column, hasColumn, indexName, linkTable, recordTable, searchTable, sortIndexName, type StoreContext } from './context.js';

export function schemaChanges({ sqlite, stmt, dialect, forgetStatements }: StoreContext) {
  /**
   * Indexes for a field: one on the column for filters, and one per sort direction on its type's sort terms
   * (link fields are indexed by their junction table, system fields by design).
   */
  function setIndexed(tableId: string, field: FieldDef, on: boolean) {
    const type = fieldType(field.type);
    if (!hasColumn(type)) return;
    if (on) {
      const rt = recordTable(tableId);
      sqlite.exec(`CREATE INDEX IF NOT EXISTS ${indexName(field.id)} ON ${rt} (${column(field.id)})`);
      if (type.sortTerms) {
        for (const dir of ['asc', 'desc'] as const) {
          const terms = type.sortTerms(column(field.id), dir === 'desc' ? 'DESC' : 'ASC');
          sqlite.exec(`CREATE INDEX IF NOT EXISTS ${sortIndexName(field.id, dir)} ON ${rt} (${terms}, _seq)`);
        }
      }
    } else {
      sqlite.exec(`DROP INDEX IF EXISTS ${indexName(field.id)}`);
      for (const dir of ['asc', 'desc'] as const) sqlite.exec(`DROP INDEX IF EXISTS ${sortIndexName(field.id, dir)}`);
    }
    forgetStatements();
  }

  return {
    createTable(tableId: string) {
      sqlite.exec(`CREATE TABLE ${recordTable(tableId)} (
        _seq INTEGER PRIMARY KEY AUTOINCREMENT,
        _id TEXT NOT NULL UNIQUE,
        _created_at TEXT NOT NULL,
        _updated_at TEXT NOT NULL,
        _created_by TEXT,
        _updated_by TEXT)`);
      sqlite.exec(`CREATE VIRTUAL TABLE ${searchTable(tableId)} USING fts5(text, tokenize = 'trigram')`);
      stmt('INSERT OR REPLACE INTO search_state (table_id, indexed_seq) VALUES (?, 0)').run(tableId);
    },

    dropTable(tableId: string, fields: FieldDef[]) {
      for (const f of fields) if (fieldType(f.type).storage === 'link') sqlite.exec(`DROP TABLE IF EXISTS ${linkTable(f.id)}`);
      sqlite.exec(`DROP TABLE IF EXISTS ${recordTable(tableId)}`);
      sqlite.exec(`DROP TABLE IF EXISTS ${searchTable(tableId)}`);
      stmt('DELETE FROM search_state WHERE table_id = ?').run(tableId);
      stmt('DELETE FROM search_dirty WHERE table_id = ?').run(tableId);
      forgetStatements();
    },

    addField(tableId: string, field: FieldDef) {
      const type = fieldType(field.type);
      if (type.storage === 'link') {
        sqlite.exec(`CREATE TABLE ${linkTable(field.id)} (src TEXT NOT NULL, dst TEXT NOT NULL, pos INTEGER NOT NULL, PRIMARY KEY (src, dst)) WITHOUT ROWID`);
        sqlite.exec(`CREATE INDEX "lnkdst_${field.id}" ON ${linkTable(field.id)} (dst)`);
      } else if (hasColumn(type)) {
        sqlite.exec(`ALTER TABLE ${recordTable(tableId)} ADD COLUMN ${column(field.id)} ${dialect.columnType(type.storage)}`);
      }
      if (field.indexed) setIndexed(tableId, field, true);
    },

    dropField(tableId: string, field: FieldDef) {
      const type = fieldType(field.type);
      if (type.storage === 'link') sqlite.exec(`DROP TABLE IF EXISTS ${linkTable(field.id)}`);
      else if (hasColumn(type)) {
        setIndexed(tableId, field, false);
        sqlite.exec(`ALTER TABLE ${recordTable(tableId)} DROP COLUMN ${column(field.id)}`);
      }
      forgetStatements();
    },

    setIndexed,
  };
}
