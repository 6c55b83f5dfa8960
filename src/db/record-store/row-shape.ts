// Turns a record-table query's rows (system columns, then one column per field with a column) into stored rows.
import type { FieldDef } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import { hasColumn, isLink } from './context.js';
import type { StoredRow } from './types.js';
import { objectLiteralFunction } from '../../object-literal.js';

/** The system columns every row query selects first, in this order. */
export const SYSTEM_COLUMNS = ['t._seq', 't._id', 't._created_at', 't._updated_at', 't._created_by', 't._updated_by'];

type ValuesOf = (r: unknown[]) => Record<string, unknown>;

/**
 * A row's `values` as one object literal (src/object-literal.ts), so every row of a table shares one shape and reading a
 * value by field id stays cheap. Link fields start null: loadLinks fills them for the whole page.
 */
function valuesBuilder(columnIds: string[], linkIds: string[]): ValuesOf {
  return objectLiteralFunction<ValuesOf>(['r'], [
    ...columnIds.map((id, i): [string, string] => [id, `r[${SYSTEM_COLUMNS.length + i}]`]),
    ...linkIds.map((id): [string, string] => [id, 'null']),
  ]);
}

const byFields = new WeakMap<FieldDef[], { columns: FieldDef[]; valuesOf: ValuesOf }>();
/** The fields with a column (in select order) and the values builder of a field list, worked out once per list. */
export function rowShape(fields: FieldDef[]) {
  let shape = byFields.get(fields);
  if (!shape) {
    const columns = fields.filter((f) => hasColumn(typeOfField(f)));
    shape = { columns, valuesOf: valuesBuilder(columns.map((f) => f.id), fields.filter(isLink).map((f) => f.id)) };
    byFields.set(fields, shape);
  }
  return shape;
}

/** The stored rows of raw query rows (without their link values). */
export function storedRows(fields: FieldDef[], raw: unknown[][]): StoredRow[] {
  const { valuesOf } = rowShape(fields);
  return raw.map((r) => ({
    seq: r[0] as number, id: r[1] as string, createdAt: r[2] as string, updatedAt: r[3] as string,
    createdBy: r[4] as string | null, updatedBy: r[5] as string | null, values: valuesOf(r),
  }));
}
