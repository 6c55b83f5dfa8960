// autonumber: the record's creation sequence number, never reused; read-only.
import { describe, noSettings, ORDERED_OPERATORS, ValueError, type FieldType } from '../field-type.js';
import { columnFilter, NEVER_EMPTY, plainSort } from './sql.js';

export const autonumber: FieldType = {
  name: 'autonumber',
  storage: 'system',
  systemColumn: '_seq',
  readOnly: true,
  operators: ORDERED_OPERATORS,
  filterSql: columnFilter(NEVER_EMPTY),
  sortTerms: plainSort,
  normalizeSettings: noSettings('autonumber'),
  toStored() {
    throw new ValueError('autonumber is read-only');
  },
  fromStored: (raw) => raw,
  filterOperand(value) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new ValueError(`expected a number, got ${describe(value)}`);
    return value;
  },
  convert: () => null,
};
