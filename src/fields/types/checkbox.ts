// checkbox: a boolean; an empty cell reads as false.
import { describe, noSettings, ValueError, type FieldType } from '../field-type.js';

export const checkbox: FieldType = {
  name: 'checkbox',
  storage: 'integer',
  operators: ['eq', 'neq', 'is_empty', 'is_not_empty'],
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
