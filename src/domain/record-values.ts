// One field's API value of a stored record row, and a record's answer: what record answers, computed fields and workflows read.
import type { RowWrite, StoredRow } from '../db/store.js';
import type { FieldDef, FieldType } from '../fields/field-type.js';
import { typeOfField } from '../fields/registry.js';
import { objectLiteralFunction } from '../object-literal.js';

/**
 * How one field's API value is read from a stored row. `memo` (per page and field) is used by types whose value is the
 * parse of stored JSON text: on a page the same text recurs (a lookup of the same linked record), so it is parsed once.
 */
export type ValueReader = (row: StoredRow, memo?: Map<unknown, unknown>) => unknown;

/** Types whose API value is a pure function of the stored JSON text, so equal texts may share one parsed value. */
const PARSED_JSON = new Set<FieldDef['type']>(['lookup', 'multi_select']);

/**
 * The reader of one field, with its type (a computed field's by its result) resolved once: a page reads each field of
 * 100 or more rows, and resolving the type per value was a large part of turning a page into its answer.
 */
export function valueReader(field: FieldDef): ValueReader {
  const type: FieldType = typeOfField(field);
  if (type.storage === 'system') {
    const col = type.systemColumn;
    if (col === '_seq') return (row) => type.fromStored(row.seq ?? null, field);
    if (col === '_created_at') return (row) => type.fromStored(row.createdAt ?? null, field);
    return (row) => type.fromStored(row.updatedAt ?? null, field);
  }
  const id = field.id;
  if (!PARSED_JSON.has(field.type)) return (row) => type.fromStored(row.values[id] ?? null, field);
  return (row, memo) => {
    const raw = row.values[id] ?? null;
    if (raw === null || !memo) return type.fromStored(raw, field);
    let value = memo.get(raw);
    if (value === undefined) memo.set(raw, (value = type.fromStored(raw, field)));
    return value;
  };
}

/**
 * The rows as a read would give them back, when every field keeps its value as written in a column of its own (no
 * computed, system, list or link storage): a create or an import then need no read of what it just wrote (a batch of
 * 1,000 creates spent an eighth of its time reading itself back).
 */
export function writtenRows(writes: RowWrite[], fields: FieldDef[], at: string, by: string | null): StoredRow[] | undefined {
  const plain = fields.every((f) => {
    const t = typeOfField(f);
    return !t.computed && (t.storage === 'text' || t.storage === 'real' || t.storage === 'integer');
  });
  if (!plain) return undefined;
  return writes.map((w) => ({ id: w.id, seq: 0, createdAt: at, updatedAt: at, createdBy: by, updatedBy: by, values: Object.fromEntries(w.values) }));
}

/** One value on its own (exports, formulas): `valueReader` is for many rows of one field. */
export function apiValue(field: FieldDef, row: StoredRow): unknown {
  const type = typeOfField(field);
  const raw = type.storage === 'system'
    ? (type.systemColumn === '_seq' ? row.seq : type.systemColumn === '_created_at' ? row.createdAt : row.updatedAt)
    : row.values[field.id];
  return type.fromStored(raw ?? null, field);
}

/** A record as the API answers it. */
export interface ApiRecord {
  id: string;
  /** Values keyed by field name, every field present (null when empty). */
  fields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  /** The id of the user, application or workflow that created the record, and of the last to change it. */
  createdBy: string | null;
  updatedBy: string | null;
}

/** The keys and value readers of a record's answer, for one field list. */
interface RecordShape {
  keys: string[];
  readers: ValueReader[];
  /** Which readers take a memo (PARSED_JSON types). */
  memoized: boolean[];
  dictionary: boolean;
  /** Builds the values object as one object literal (see `literalBuilder`); absent for a dictionary. */
  literal?: (row: StoredRow, readers: ValueReader[], memos?: Array<Map<unknown, unknown> | undefined>) => Record<string, unknown>;
}

/** The values of a record as one object literal (src/object-literal.ts); "__proto__" never gets here (a dictionary). */
function literalBuilder(keys: string[]): RecordShape['literal'] {
  return objectLiteralFunction<NonNullable<RecordShape['literal']>>(['row', 'readers', 'memos'], keys.map((k, i) => [k, `readers[${i}](row, memos && memos[${i}])`]));
}

// Each field list's shape is worked out once: outside transactions a table's field list is cached, so it serves every page.
const shapes = { name: new WeakMap<FieldDef[], RecordShape>(), id: new WeakMap<FieldDef[], RecordShape>() };
function shapeOf(fields: FieldDef[], keyBy: 'name' | 'id'): RecordShape {
  let shape = shapes[keyBy].get(fields);
  if (!shape) {
    shape = {
      keys: fields.map((f) => (keyBy === 'id' ? f.id : f.name)),
      readers: fields.map(valueReader),
      memoized: fields.map((f) => PARSED_JSON.has(f.type)),
      dictionary: keyBy === 'name' && fields.some((f) => f.name === '__proto__'),
    };
    if (!shape.dictionary) shape.literal = literalBuilder(shape.keys);
    shapes[keyBy].set(fields, shape);
  }
  return shape;
}

function build(shape: RecordShape, row: StoredRow, memos?: Array<Map<unknown, unknown> | undefined>): ApiRecord {
  const { keys, readers } = shape;
  let values: Record<string, unknown>;
  if (shape.literal) values = shape.literal(row, readers, memos);
  else {
    // A field named "__proto__": a prototype-less object, where assigning that key makes an own property (in a plain
    // object it would set the prototype). Plain objects elsewhere: JSON.stringify walks them about a third faster.
    values = Object.create(null);
    for (let i = 0; i < keys.length; i++) values[keys[i]] = readers[i](row, memos?.[i]);
  }
  return { id: row.id, fields: values, createdAt: row.createdAt, updatedAt: row.updatedAt, createdBy: row.createdBy, updatedBy: row.updatedBy };
}

/** One record's answer, values keyed by field name (v1, plugins) or id (Open API). */
export function recordOf(fields: FieldDef[], row: StoredRow, keyBy: 'name' | 'id' = 'name'): ApiRecord {
  return build(shapeOf(fields, keyBy), row);
}

/**
 * A page's answers. Records of the page may share one parsed lookup or multi-select array (equal stored text): answers
 * are serialised, never changed in place.
 */
export function recordsOf(fields: FieldDef[], rows: StoredRow[], keyBy: 'name' | 'id' = 'name'): ApiRecord[] {
  const shape = shapeOf(fields, keyBy);
  const memos = rows.length > 1 && shape.memoized.includes(true) ? shape.memoized.map((m) => (m ? new Map() : undefined)) : undefined;
  return rows.map((row) => build(shape, row, memos));
}
