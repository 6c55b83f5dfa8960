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
