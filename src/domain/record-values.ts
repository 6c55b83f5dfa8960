// One field's API value of a stored record row: what record answers, computed fields and workflows read.
import type { StoredRow } from '../db/store.js';
import type { FieldDef } from '../fields/field-type.js';
import { typeOfField } from '../fields/registry.js';

export function apiValue(field: FieldDef, row: StoredRow): unknown {
  const type = typeOfField(field);
  const raw = type.storage === 'system'
    ? (type.systemColumn === '_seq' ? row.seq : type.systemColumn === '_created_at' ? row.createdAt : row.updatedAt)
    : row.values[field.id];
  return type.fromStored(raw ?? null, field);
}
