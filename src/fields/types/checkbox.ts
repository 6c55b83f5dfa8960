// checkbox: a boolean; an empty cell reads as false.
import { describe, noSettings, ValueError, type FieldType } from '../field-type.js';
import { columnFilter, EMPTY_IS_NULL } from './sql.js';

const compare = columnFilter(EMPTY_IS_NULL);

export const checkbox: FieldType = {
  name: 'checkbox',
  storage: 'integer',
  operators: ['eq', 'neq', 'is_empty', 'is_not_empty'],
  // Unchecked is false or empty, in filters and in sorts.
  filterSql(term, p) {
    const { op, value, col } = term;
    if (op === 'is_empty' || (op === 'eq' && value === 0)) return `(${col} IS NULL OR ${col} = 0)`;
    if (op === 'is_not_empty' || (op === 'neq' && value === 0)) return `${col} = 1`;
    return compare(term, p);
  },
  sortTerms: (col, dir) => `coalesce(${col}, 0) ${dir}`,
  normalizeSettings: noSettings('checkbox'),
  toStored(value) {
    if (typeof value !== 'boolean') throw new ValueError(`expected true or false, got ${describe(value)}`);
    return value ? 1 : 0;
  },
  fromStored: (raw) => raw === 1,
  convert(value) {
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (typeof value === 'number') return value !== 0 ? 1 : 0;
    if (typeof value === 'string') return ['true', 'yes', '1', 'x', 'checked'].includes(value.trim().toLowerCase()) ? 1 : 0;
    return null;
  },
};
