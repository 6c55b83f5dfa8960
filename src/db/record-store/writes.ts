// Record writes: batch insert, update, delete, filling one field for a type change, and the junction rows of links.
import type { ColumnStorage, FieldDef } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import { Params } from '../sql-client.js';
import { chunks, column, hasColumn, isLink, linkTable, recordTable, searchTable, type StoreContext } from './context.js';
import { rowShape } from './row-shape.js';
import type { RowWrite } from './types.js';

/** A junction table's columns (one list, so insertRows keeps its statement texts). */
const LINK_COLUMNS = ['src', 'dst', 'pos'];

/** What record writes ask of the search index (search-index.ts): marking changed text, and taking turns with a sync. */
interface SearchMarks {
  markSearchDirty(tableId: string, ids: string[]): Promise<void>;
  takeTurnWithSync(tableId: string): Promise<void>;
}

export function recordWrites(ctx: StoreContext, { markSearchDirty, takeTurnWithSync }: SearchMarks) {
  const { client, dialect: d } = ctx;
  const p = (n: number) => d.placeholder(n);
  // Value types without the columns' collation (which the columns apply on assignment), for array parameters.
  const valueType = (storage: ColumnStorage) => d.columnType(storage).replace(/ COLLATE .*/, '');
  const text = valueType('text');
  /**
   * A record insert's columns and their types, worked out once per field list (lists are cached by identity): the
   * single-record create runs this on every write, and the same column list lets insertRows keep its statement text.
   */
  const insertShapes = new WeakMap<FieldDef[], { colFields: FieldDef[]; cols: string[]; types: string[] }>();
  const insertShape = (fields: FieldDef[]) => {
    let shape = insertShapes.get(fields);
    if (!shape) {
      const colFields = rowShape(fields).columns;
      shape = {
        colFields,
        cols: ['_id', '_created_at', '_updated_at', '_created_by', '_updated_by', ...colFields.map((f) => column(f.id))],
        types: [text, text, text, text, text, ...colFields.map((f) => valueType(typeOfField(f).storage as ColumnStorage))],
      };
      insertShapes.set(fields, shape);
    }
    return shape;
  };

  /** Junction rows of one link field; `replace` drops the records' old links first. */
  async function writeLinks(lt: string, links: Array<{ src: string; targets: string[] }>, replace: boolean) {
    if (replace) {
      for (const chunk of chunks(links.map((l) => l.src))) {
        await client.run(`DELETE FROM ${lt} WHERE src IN (${new Params(d).bindAll(chunk)})`, chunk);
      }
    }
    await ctx.insertRows(lt, LINK_COLUMNS, links.flatMap(({ src, targets }) => targets.map((dst, pos) => [src, dst, pos])), [text, text, 'integer']);
  }

  return {
    /** Writes one field's value for many records, without touching their modification time. */
    async fillField(tableId: string, field: FieldDef, values: Array<{ id: string; stored: unknown }>) {
      const type = typeOfField(field);
      const prefix = await client.tablePrefix(tableId);
      if (type.storage === 'link') {
        await writeLinks(linkTable(field.id, prefix), values.map((v) => ({ src: v.id, targets: v.stored as string[] })), true);
        return;
      }
      if (!hasColumn(type)) return;
      const rt = recordTable(tableId, prefix);
      if (client.rowsPerInsert > 1 && values.length > 1) {
        // One statement per slice where a round trip costs more than the row (PostgreSQL): a join with the new values.
        // CAST takes the type without the column's collation; the column applies its own on assignment.
        const cast = valueType(type.storage as ColumnStorage);
        for (const slice of chunks(values, client.rowsPerInsert)) {
          let n = 0;
          const tuples = slice.map(() => `(${p(++n)}, CAST(${p(++n)} AS ${cast}))`).join(', ');
          await client.run(`UPDATE ${rt} AS t SET ${column(field.id)} = v.val FROM (VALUES ${tuples}) AS v(id, val) WHERE t._id = v.id`,
            slice.flatMap((v) => [v.id, v.stored]));
        }
        return;
      }
      const sql = `UPDATE ${rt} SET ${column(field.id)} = ${p(1)} WHERE _id = ${p(2)}`;
      for (const v of values) await client.run(sql, [v.stored, v.id]);
    },

    async insert(tableId: string, fields: FieldDef[], rows: RowWrite[], at: string, by: string | null) {
      const prefix = await client.tablePrefix(tableId);
      const { colFields, cols, types } = insertShape(fields);
      await ctx.insertRows(recordTable(tableId, prefix), cols, rows.map((row) => [
        row.id, at, at, by, by, ...colFields.map((f) => row.values.get(f.id) ?? null),
      ]), types);
      for (const f of fields.filter(isLink)) {
        const links = rows.map((row) => ({ src: row.id, targets: (row.values.get(f.id) as string[] | undefined) ?? [] }));
        await writeLinks(linkTable(f.id, prefix), links.filter((l) => l.targets.length), false);
      }
    },

    async update(tableId: string, fields: FieldDef[], rows: RowWrite[], at: string, by: string | null) {
      const prefix = await client.tablePrefix(tableId);
      const links = new Set(fields.filter(isLink).map((f) => f.id));
      for (const row of rows) {
        if (row.values.size === 0) continue; // nothing to change: the record keeps its modification time
        const params = new Params(d);
        const sets = [`_updated_at = ${params.bind(at)}`, `_updated_by = ${params.bind(by)}`];
        for (const [fieldId, stored] of row.values) {
          if (links.has(fieldId)) await writeLinks(linkTable(fieldId, prefix), [{ src: row.id, targets: (stored as string[] | null) ?? [] }], true);
          else sets.push(`${column(fieldId)} = ${params.bind(stored)}`);
        }
        await client.run(`UPDATE ${recordTable(tableId, prefix)} SET ${sets.join(', ')} WHERE _id = ${params.bind(row.id)}`, params.values);
      }
      const searchable = new Set(fields.filter((f) => typeOfField(f).searchable).map((f) => f.id));
      await markSearchDirty(tableId, rows.filter((r) => [...r.values.keys()].some((id) => searchable.has(id))).map((r) => r.id));
    },

    /** Deletes records and every link to them; `linksIn` are the link fields of this table, `linksTo` those pointing at it. */
    async delete(tableId: string, ids: string[], linksIn: FieldDef[], linksTo: FieldDef[]) {
      const prefix = await client.tablePrefix(tableId);
      const rt = recordTable(tableId, prefix);
      // A sync running beside this transaction may be indexing these very records: wait for it, then remove them.
      if (ids.length) await takeTurnWithSync(tableId);
      for (const chunk of chunks(ids)) {
        const marks = new Params(d).bindAll(chunk);
        await client.run(`DELETE FROM ${searchTable(tableId, prefix)} WHERE ${d.search.key} IN (SELECT _seq FROM ${rt} WHERE _id IN (${marks}))`, chunk);
        const params = new Params(d);
        const table = params.bind(tableId);
        await client.run(`DELETE FROM search_dirty WHERE table_id = ${table} AND seq IN (SELECT _seq FROM ${rt} WHERE _id IN (${params.bindAll(chunk)}))`, params.values);
        await client.run(`DELETE FROM ${rt} WHERE _id IN (${marks})`, chunk);
        for (const f of linksIn) await client.run(`DELETE FROM ${linkTable(f.id, prefix)} WHERE src IN (${marks})`, chunk);
        for (const f of linksTo) await client.run(`DELETE FROM ${linkTable(f.id, prefix)} WHERE dst IN (${marks})`, chunk);
      }
    },
  };
}
