// link: an array of record ids of config.table_id, kept in a junction table; existence is checked by the record service.
import { describe, rejectUnknownKeys, SET_OPERATORS, ValueError, type FieldType } from '../field-type.js';

export const link: FieldType = {
  name: 'link',
  storage: 'link',
  operators: SET_OPERATORS,
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
