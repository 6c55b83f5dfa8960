// Record writes: batch insert, update, delete, filling one field for a type change, and the junction rows of links.
import type { FieldDef } from '../../fields/field-type.js';
import { fieldType } from '../../fields/registry.js';
import { column, hasColumn, linkTable, recordTable, searchTable, type StoreContext } from './context.js';
import type { RowWrite } from './types.js';

const isLink = (f: FieldDef) => fieldType(f.type).storage === 'link';

export function recordWrites({ stmt }: StoreContext, markSearchDirty: (tableId: string, ids: string[]) => void) {
  function writeLinks(fieldId: string, recordId: string, targets: string[], replace: boolean) {
    if (replace) stmt(`DELETE FROM ${linkTable(fieldId)} WHERE src = ?`).run(recordId);
    const ins = stmt(`INSERT INTO ${linkTable(fieldId)} (src, dst, pos) VALUES (?, ?, ?)`);
    targets.forEach((dst, pos) => ins.run(recordId, dst, pos));
  }

  return {
    /** Writes one field's value for many records, without touching their modification time. */
    fillField(tableId: string, field: FieldDef, values: Array<{ id: string; stored: unknown }>) {
      const type = fieldType(field.type);
      if (type.storage === 'link') {
        for (const v of values) writeLinks(field.id, v.id, v.stored as string[], true);
        return;
      }
      if (!hasColumn(type)) return;
      const upd = stmt(`UPDATE ${recordTable(tableId)} SET ${column(field.id)} = ? WHERE _id = ?`);
      for (const v of values) upd.run(v.stored, v.id);
    },

    insert(tableId: string, fields: FieldDef[], rows: RowWrite[], at: string, by: string | null) {
      const colFields = fields.filter((f) => hasColumn(fieldType(f.type)));
      const linkFields = fields.filter(isLink);
      const cols = ['_id', '_created_at', '_updated_at', '_created_by', '_updated_by', ...colFields.map((f) => column(f.id))];
      const ins = stmt(`INSERT INTO ${recordTable(tableId)} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
      const args: unknown[] = new Array(cols.length);
      for (const row of rows) {
        args[0] = row.id; args[1] = at; args[2] = at; args[3] = by; args[4] = by;
        for (let i = 0; i < colFields.length; i++) args[5 + i] = row.values.get(colFields[i].id) ?? null;
        ins.run(args);
        for (const f of linkFields) {
          const targets = row.values.get(f.id) as string[] | undefined;
          if (targets?.length) writeLinks(f.id, row.id, targets, false);
        }
      }
    },

    update(tableId: string, fields: FieldDef[], rows: RowWrite[], at: string, by: string | null) {
      const links = new Set(fields.filter(isLink).map((f) => f.id));
      for (const row of rows) {
        if (row.values.size === 0) continue; // nothing to change: the record keeps its modification time
        const sets = ['_updated_at = ?', '_updated_by = ?'];
        const args: unknown[] = [at, by];
        for (const [fieldId, stored] of row.values) {
          if (links.has(fieldId)) writeLinks(fieldId, row.id, (stored as string[] | null) ?? [], true);
          else {
            sets.push(`${column(fieldId)} = ?`);
            args.push(stored);
          }
        }
        args.push(row.id);
        stmt(`UPDATE ${recordTable(tableId)} SET ${sets.join(', ')} WHERE _id = ?`).run(args);
      }
      const searchable = new Set(fields.filter((f) => fieldType(f.type).searchable).map((f) => f.id));
      markSearchDirty(tableId, rows.filter((r) => [...r.values.keys()].some((id) => searchable.has(id))).map((r) => r.id));
    },

    /** Deletes records and every link to them; `linksIn` are the link fields of this table, `linksTo` those pointing at it. */
    delete(tableId: string, ids: string[], linksIn: FieldDef[], linksTo: FieldDef[]) {
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const marks = chunk.map(() => '?').join(',');
        stmt(`DELETE FROM ${searchTable(tableId)} WHERE rowid IN (SELECT _seq FROM ${recordTable(tableId)} WHERE _id IN (${marks}))`).run(chunk);
        stmt(`DELETE FROM search_dirty WHERE table_id = ? AND seq IN (SELECT _seq FROM ${recordTable(tableId)} WHERE _id IN (${marks}))`).run(tableId, ...chunk);
        stmt(`DELETE FROM ${recordTable(tableId)} WHERE _id IN (${marks})`).run(chunk);
        for (const f of linksIn) stmt(`DELETE FROM ${linkTable(f.id)} WHERE src IN (${marks})`).run(chunk);
        for (const f of linksTo) stmt(`DELETE FROM ${linkTable(f.id)} WHERE dst IN (${marks})`).run(chunk);
      }
    },
  };
}
