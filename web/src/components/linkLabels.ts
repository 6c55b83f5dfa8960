// Titles of linked records learned while picking links, so link cells can show a name instead of an id without extra requests.
import { reactive } from 'vue';
import { gql } from '../api';
import type { FieldDef } from './fieldTypes';

/** record id → title, filled by the link picker and the record drawer. */
export const linkLabels = reactive(new Map<string, string>());

const fieldCache = new Map<string, Promise<FieldDef[]>>();
/** The fields of a table, fetched once per page load (cleared when fields change). */
export function tableFields(tableId: string): Promise<FieldDef[]> {
  let p = fieldCache.get(tableId);
  if (!p) {
    p = gql<{ fields: { items: FieldDef[] } }>(
      'query($t: ID!) { fields(tableId: $t, pageSize: 1000) { items { id tableId name type options config required indexed } } }',
      { t: tableId },
    ).then((d) => d.fields.items);
    p.catch(() => fieldCache.delete(tableId));
    fieldCache.set(tableId, p);
  }
  return p;
}
export function forgetTableFields(tableId: string) {
  fieldCache.delete(tableId);
}

/** The title of a record: the value of the table's first field that has one worth showing. */
export function titleOf(fields: FieldDef[], values: Record<string, unknown>, id: string): string {
  for (const f of fields.slice(0, 3)) {
    const v = values[f.name];
    if (v === null || v === undefined || v === '') continue;
    if (Array.isArray(v)) return v.join(', ');
    if (typeof v === 'object') continue;
    return String(v);
  }
  return id;
}

const prefetched = new Map<string, Promise<void>>();
/**
 * Learns the titles of a linked table's records once per page load, when that table is small (at most 200 records):
 * one request per linked table when a grid opens, never one per row.
 */
export function prefetchLabels(tableId: string): Promise<void> {
  let p = prefetched.get(tableId);
  if (!p) {
    p = (async () => {
      const [fields, d] = await Promise.all([
        tableFields(tableId),
        gql<{ records: { total: number; items: Array<{ id: string; fields: Record<string, unknown> }> } }>(
          'query($t: ID!) { records(tableId: $t, pageSize: 200) { total items { id fields } } }', { t: tableId }),
      ]);
      for (const r of d.records.items) linkLabels.set(r.id, titleOf(fields, r.fields, r.id));
    })().catch(() => {});
    prefetched.set(tableId, p);
  }
  return p;
}
