// multi_select: an array of distinct options, stored as JSON text.
import { describe, rejectUnknownKeys, SET_OPERATORS, ValueError, type FieldType } from '../field-type.js';
import { normalizeOptions } from './select-options.js';

export const multiSelect: FieldType = {
  name: 'multi_select',
  searchable: true,
  storage: 'json',
  operators: SET_OPERATORS,
  normalizeSettings(options, config) {
    rejectUnknownKeys(config, []);
    return { options: normalizeOptions(options ?? []), config: {} };
  },
  toStored(value, field) {
    if (!Array.isArray(value)) throw new ValueError(`expected an array of options, got ${describe(value)}`);
    const seen = new Set<string>();
    for (const v of value) {
      if (typeof v !== 'string') throw new ValueError(`expected an array of strings, found ${describe(v)}`);
      if (!field.options?.includes(v)) throw new ValueError(`"${v.slice(0, 50)}" is not one of the options`);
      if (seen.has(v)) throw new ValueError(`"${v}" appears twice`);
      seen.add(v);
    }
    return value.length ? JSON.stringify(value) : null;
  },
  fromStored: (raw) => (raw == null ? null : JSON.parse(raw as string)),
  filterOperand(value) {
    if (typeof value !== 'string') throw new ValueError(`expected a string, got ${describe(value)}`);
    return value;
  },
  convert(value, field) {
    const parts = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',').map((s) => s.trim()) : [];
    const kept = [...new Set(parts.filter((p): p is string => typeof p === 'string' && !!field.options?.includes(p)))];
    return kept.length ? JSON.stringify(kept) : null;
  },
};
