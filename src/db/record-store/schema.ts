// Schema changes of user tables: record tables, columns and junction tables of fields, and their indexes.
import type { FieldDef } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import {
  column, hasColumn, indexName, linkDstIndexName, linkTable, recordTable, searchIndexName, searchTable, sortIndexName,
  sortTermsOf, type StoreContext,
} from './context.js';

export function schemaChanges({ client, dialect: d }: StoreContext) {
  const p = (n: number) => d.placeholder(n);

  /**
   * Indexes for a field: one on the column for filters, and one per sort direction on its type's sort terms
   * (link fields are indexed by their junction table, system fields by design).
   */
  async function setIndexed(tableId: string, field: FieldDef, on: boolean) {
    const type = typeOfField(field);
    if (!hasColumn(type)) return;
    const prefix = await client.tablePrefix(tableId);
    if (on) {
      const rt = recordTable(tableId, prefix);
      await client.exec(`CREATE INDEX IF NOT EXISTS ${indexName(field.id)} ON ${rt} (${column(field.id)}${d.filterIndexTail})`);
      if (type.sortTerms) {
        for (const dir of ['asc', 'desc'] as const) {
          const terms = d.sortIndexTerms(sortTermsOf(type, column(field.id), dir, d), column(field.id));
          if (terms) await client.exec(`CREATE INDEX IF NOT EXISTS ${sortIndexName(field.id, dir)} ON ${rt} (${terms}, _seq)`);
        }
      }
    } else {
      await client.exec(`DROP INDEX IF EXISTS ${indexName(field.id, prefix)}`);
      for (const dir of ['asc', 'desc'] as const) await client.exec(`DROP INDEX IF EXISTS ${sortIndexName(field.id, dir, prefix)}`);
    }
    client.forgetStatements();
  }

  return {
    /** The record table, its search table and its search watermark, in the schema of base `baseId`. */
    async createTable(tableId: string, baseId: string) {
      const schema = d.baseSchema(baseId);
      if (schema) await client.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      const prefix = schema ? `${schema}.` : '';
      const text = d.columnType('text');
      await client.exec(`CREATE TABLE ${recordTable(tableId, prefix)} (
        ${d.seqColumn},
        _id ${text} NOT NULL UNIQUE,
        _created_at ${text} NOT NULL,
        _updated_at ${text} NOT NULL,
        _created_by ${text},
        _updated_by ${text})`);
      for (const ddl of d.search.create(searchTable(tableId, prefix), searchIndexName(tableId))) await client.exec(ddl);
      await client.run(d.insertOrReplace('search_state', ['table_id', 'indexed_seq'], ['table_id'], [p(1), '0']), [tableId]);
    },

    /** After a base's tables were dropped: its schema, where the engine has one per base. */
    async dropBase(baseId: string) {
      const schema = d.baseSchema(baseId);
      if (schema) await client.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },

    async dropTable(tableId: string, fields: FieldDef[]) {
      const prefix = await client.tablePrefix(tableId);
      for (const f of fields) if (typeOfField(f).storage === 'link') await client.exec(`DROP TABLE IF EXISTS ${linkTable(f.id, prefix)}`);
      await client.exec(`DROP TABLE IF EXISTS ${recordTable(tableId, prefix)}`);
      await client.exec(`DROP TABLE IF EXISTS ${searchTable(tableId, prefix)}`);
      await client.run(`DELETE FROM search_state WHERE table_id = ${p(1)}`, [tableId]);
      await client.run(`DELETE FROM search_dirty WHERE table_id = ${p(1)}`, [tableId]);
      client.forgetStatements();
    },

    async addField(tableId: string, field: FieldDef) {
      const type = typeOfField(field);
      const prefix = await client.tablePrefix(tableId);
      if (type.storage === 'link') {
        const text = d.columnType('text');
        const lt = linkTable(field.id, prefix);
        await client.exec(`CREATE TABLE ${lt} (src ${text} NOT NULL, dst ${text} NOT NULL, pos INTEGER NOT NULL, PRIMARY KEY (src, dst))${d.junctionTableOptions}`);
        await client.exec(`CREATE INDEX ${linkDstIndexName(field.id)} ON ${lt} (dst)`);
      } else if (hasColumn(type)) {
        await client.exec(`ALTER TABLE ${recordTable(tableId, prefix)} ADD COLUMN ${column(field.id)} ${d.columnType(type.storage)}`);
      }
      if (field.indexed) await setIndexed(tableId, field, true);
    },

    async dropField(tableId: string, field: FieldDef) {
      const type = typeOfField(field);
      const prefix = await client.tablePrefix(tableId);
      if (type.storage === 'link') await client.exec(`DROP TABLE IF EXISTS ${linkTable(field.id, prefix)}`);
      else if (hasColumn(type)) {
        await setIndexed(tableId, field, false);
        await client.exec(`ALTER TABLE ${recordTable(tableId, prefix)} DROP COLUMN ${column(field.id)}`);
      }
      client.forgetStatements();
    },

    setIndexed,
  };
}
