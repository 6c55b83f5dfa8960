// The shapes the record store takes and returns: filter conditions, sort keys, stored rows, row writes.
import type { FieldDef, Operator } from '../../fields/field-type.js';

export interface Condition {
  field: FieldDef;
  op: Operator;
  /** The operand in stored form; an array for in/not_in/has_*; absent for is_empty/is_not_empty. */
  value?: unknown;
}
export interface ConditionGroup {
  conjunction: 'and' | 'or';
  conditions: Array<Condition | ConditionGroup>;
}
export interface SortKey {
  field: FieldDef;
  direction: 'asc' | 'desc';
}
export interface StoredRow {
  seq: number;
  id: string;
  createdAt: string;
  updatedAt: string;
  createdBy: string | null;
  updatedBy: string | null;
  /** Raw stored values by field id (link fields: arrays of record ids). */
  values: Record<string, unknown>;
}
export interface RowWrite {
  id: string;
  /** Stored values by field id; link fields take arrays of record ids. */
  values: Map<string, unknown>;
}
