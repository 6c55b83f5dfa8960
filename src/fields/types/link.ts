// link: an array of record ids of config.table_id, kept in a junction table; existence is checked by the record service.
import { describe, rejectUnknownKeys, SET_OPERATORS, ValueError, type FieldType } from '../field-type.js';

export const link: FieldType = {
  name: 'link',
  storage: 'link',
  operators: SET_OPERATORS,
  // `col` is the junction table (src, dst, pos).
  filterSql({ op, value, col, recordId }, p) {
    const d = p.dialect;
    const linked = `SELECT 1 FROM ${col} l WHERE l.src = ${recordId}`;
    if (op === 'is_empty') return `NOT EXISTS (${linked})`;
    if (op === 'is_not_empty') return `EXISTS (${linked})`;
    // has_any, has_all, has_none
    const values = [...new Set(value as string[])];
    if (values.length === 0) return op === 'has_any' ? d.false : d.true;
    const marks = p.bindAll(values);
    if (op === 'has_any') return `EXISTS (${linked} AND l.dst IN (${marks}))`;
    if (op === 'has_none') return `NOT EXISTS (${linked} AND l.dst IN (${marks}))`;
    return `(SELECT COUNT(*) FROM ${col} l WHERE l.src = ${recordId} AND l.dst IN (${marks})) = ${values.length}`;
  },
  sortTerms: null,
  normalizeSettings(options, config) {
    if (options !== undefined && options !== null) throw new ValueError('options are only for select fields, not link');
    rejectUnknownKeys(config, ['table_id']);
    if (typeof config.table_id !== 'string' || !config.table_id) throw new ValueError('config.table_id must name the linked table');
    return { options: null, config: { table_id: config.table_id } };
  },
  toStored(value) {
    if (!Array.isArray(value)) throw new ValueError(`expected an array of record ids, got ${describe(value)}`);
    const seen = new Set<string>();
    for (const v of value) {
      if (typeof v !== 'string') throw new ValueError(`expected an array of record ids, found ${describe(v)}`);
      if (seen.has(v)) throw new ValueError(`record ${v} appears twice`);
      seen.add(v);
    }
    return value;
  },
  fromStored: (raw) => (Array.isArray(raw) && raw.length ? raw : null),
  filterOperand(value) {
    if (typeof value !== 'string') throw new ValueError(`expected a record id, got ${describe(value)}`);
    return value;
  },
  // Values of another type are never record ids of the linked table.
  convert: () => null,
};
