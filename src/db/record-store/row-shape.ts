// Turns a record-table query's rows (system columns, then one column per field with a column) into stored rows.
import type { FieldDef } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import { hasColumn, isLink } from './context.js';
import type { StoredRow } from './types.js';

/** The system columns every row query selects first, in this order. */
export const SYSTEM_COLUMNS = ['t._seq', 't._id', 't._created_at', 't._updated_at', 't._created_by', 't._updated_by'];

type ValuesOf = (r: unknown[]) => Record<string, unknown>;

/**
 * The function building a row's `values` as one object literal, its keys written out: V8 then makes each object with its
 * final shape at once rather than growing it key by key for every value of a page, and every row of a table shares that
 * shape, so reading a value by field id stays cheap. Link fields start null: loadLinks fills them for the whole page.
 * Cached by the column list (a field list read in a transaction is a new array each time), with a bound.
 */
const builders = new Map<string, ValuesOf>();
function valuesBuilder(columnIds: string[], linkIds: string[]): ValuesOf {
  const key = `${columnIds.join(',')}|${linkIds.join(',')}`;
  let built = builders.get(key);
  if (built) return built;
  if (builders.size >= 500) builders.clear();
  // Field ids are service-made ("fld" and letters); JSON.stringify keeps the source valid whatever they hold.
  const props = [
    ...columnIds.map((id, i) => `${JSON.stringify(id)}: r[${SYSTEM_COLUMNS.length + i}]`),
    ...linkIds.map((id) => `${JSON.stringify(id)}: null`),
  ];
  built = new Function('r', `return {\n${props.join(',\n')}\n};`) as ValuesOf;
  builders.set(key, built);
  return built;
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
