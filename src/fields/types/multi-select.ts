// multi_select: an array of distinct options, stored as JSON text.
import { describe, rejectUnknownKeys, SET_OPERATORS, ValueError, type FieldType } from '../field-type.js';
import { normalizeOptions } from './select-options.js';
import { emptiesLast } from './sql.js';

export const multiSelect: FieldType = {
  name: 'multi_select',
  searchable: true,
  storage: 'json',
  operators: SET_OPERATORS,
  filterSql({ op, value, col }, p) {
    const d = p.dialect;
    if (op === 'is_empty') return `(${col} IS NULL OR ${col} = ${d.emptyJsonArray})`;
    if (op === 'is_not_empty') return `(${col} IS NOT NULL AND ${col} <> ${d.emptyJsonArray})`;
    // has_any, has_all, has_none
    const values = [...new Set(value as unknown[])];
    if (values.length === 0) return op === 'has_any' ? d.false : d.true;
    const inner = () => `SELECT 1 FROM ${d.jsonElements(col)} WHERE value IN (${p.bindAll(values)})`;
    if (op === 'has_any') return `EXISTS (${inner()})`;
    if (op === 'has_none') return `NOT EXISTS (${inner()})`;
    return `(SELECT COUNT(DISTINCT value) FROM ${d.jsonElements(col)} WHERE value IN (${p.bindAll(values)})) = ${values.length}`;
  },
  sortTerms: emptiesLast,
  searchText: (col, d) => `(SELECT ${d.joinLines('value')} FROM ${d.jsonElements(col)})`,
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
