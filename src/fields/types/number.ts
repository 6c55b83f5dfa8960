// number: a finite number, rounded to config.precision (0-8) decimals when set.
import { convertVia, describe, rejectUnknownKeys, ValueError, type FieldType } from '../field-type.js';
import { columnFilter, emptiesLast, EMPTY_IS_NULL } from './sql.js';

export const number: FieldType = {
  name: 'number',
  storage: 'real',
  operators: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'is_empty', 'is_not_empty'],
  filterSql: columnFilter(EMPTY_IS_NULL),
  sortTerms: emptiesLast,
  normalizeSettings(options, config) {
    if (options !== undefined && options !== null) throw new ValueError('options are only for select fields, not number');
    rejectUnknownKeys(config, ['precision']);
    if (config.precision === undefined || config.precision === null) return { options: null, config: {} };
    const p = config.precision;
    if (!Number.isInteger(p) || (p as number) < 0 || (p as number) > 8) throw new ValueError('config.precision must be an integer from 0 to 8');
    return { options: null, config: { precision: p } };
  },
  toStored(value, field) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new ValueError(`expected a number, got ${describe(value)}`);
    const p = field.config.precision as number | undefined;
    if (p === undefined) return value;
    const f = 10 ** p;
    return Math.round(value * f) / f;
  },
  fromStored: (raw) => raw ?? null,
  filterOperand(value) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new ValueError(`expected a number, got ${describe(value)}`);
    return value;
  },
  convert(value, field, ctx) {
    if (typeof value === 'string') {
      const n = Number(value.trim().replace(/,/g, ''));
      return value.trim() !== '' && Number.isFinite(n) ? number.toStored(n, field, ctx) : null;
    }
    if (typeof value === 'boolean') return value ? 1 : 0;
    return convertVia(number)(value, field, ctx);
  },
};
