// rating: an integer from 0 to config.max (1-10, default 5).
import { describe, rejectUnknownKeys, ValueError, ORDERED_OPERATORS, type FieldType } from '../field-type.js';
import { columnFilter, emptiesLast, EMPTY_IS_NULL } from './sql.js';

const maxOf = (config: Record<string, unknown>) => (config.max as number | undefined) ?? 5;

export const rating: FieldType = {
  name: 'rating',
  storage: 'integer',
  operators: ORDERED_OPERATORS,
  filterSql: columnFilter(EMPTY_IS_NULL),
  sortTerms: emptiesLast,
  normalizeSettings(options, config) {
    if (options !== undefined && options !== null) throw new ValueError('options are only for select fields, not rating');
    rejectUnknownKeys(config, ['max']);
    const max = config.max ?? 5;
    if (!Number.isInteger(max) || (max as number) < 1 || (max as number) > 10) throw new ValueError('config.max must be an integer from 1 to 10');
    return { options: null, config: { max } };
  },
  toStored(value, field) {
    const max = maxOf(field.config);
    if (!Number.isInteger(value)) throw new ValueError(`expected an integer from 0 to ${max}, got ${describe(value)}`);
    if ((value as number) < 0 || (value as number) > max) throw new ValueError(`rating ${value} is outside 0..${max}`);
    return value;
  },
  fromStored: (raw) => raw ?? null,
  filterOperand(value) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new ValueError(`expected a number, got ${describe(value)}`);
    return value;
  },
  convert(value, field) {
    const n = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : NaN;
    if (!Number.isFinite(n)) return null;
    return Math.min(Math.max(Math.round(n), 0), maxOf(field.config));
  },
};
