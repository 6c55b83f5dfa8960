// single_select: one of the field's options.
import { describe, rejectUnknownKeys, ValueError, type FieldType } from '../field-type.js';
import { columnFilter, emptiesLast, EMPTY_TEXT } from './sql.js';
import { normalizeOptions } from './select-options.js';

export const singleSelect: FieldType = {
  name: 'single_select',
  searchable: true,
  storage: 'text',
  operators: ['eq', 'neq', 'in', 'not_in', 'is_empty', 'is_not_empty'],
  filterSql: columnFilter(EMPTY_TEXT),
  sortTerms: emptiesLast,
  normalizeSettings(options, config) {
    rejectUnknownKeys(config, []);
    return { options: normalizeOptions(options ?? []), config: {} };
  },
  toStored(value, field) {
    if (typeof value !== 'string') throw new ValueError(`expected one of the options, got ${describe(value)}`);
    if (value === '') return null;
    if (!field.options?.includes(value)) throw new ValueError(`"${value.slice(0, 50)}" is not one of the options`);
    return value;
  },
  fromStored: (raw) => raw ?? null,
  filterOperand(value) {
    if (typeof value !== 'string') throw new ValueError(`expected a string, got ${describe(value)}`);
    return value;
  },
  convert(value, field) {
    const s = Array.isArray(value) ? value[0] : value;
    return typeof s === 'string' && field.options?.includes(s) ? s : null;
  },
};
