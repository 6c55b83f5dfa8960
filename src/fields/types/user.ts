// user: the id of one member of the table's base.
import { describe, noSettings, ValueError, type FieldType } from '../field-type.js';
import { columnFilter, emptiesLast, EMPTY_TEXT } from './sql.js';

export const user: FieldType = {
  name: 'user',
  storage: 'text',
  checksMembers: true,
  operators: ['eq', 'neq', 'in', 'not_in', 'has_any', 'has_all', 'has_none', 'is_empty', 'is_not_empty'],
  filterSql: columnFilter(EMPTY_TEXT),
  sortTerms: emptiesLast,
  normalizeSettings: noSettings('user'),
  toStored(value, _field, ctx) {
    if (typeof value !== 'string') throw new ValueError(`expected a user id, got ${describe(value)}`);
    if (!ctx.isBaseMember(value)) throw new ValueError(`"${value.slice(0, 40)}" is not a member of this base`);
    return value;
  },
  fromStored: (raw) => raw ?? null,
  filterOperand(value) {
    if (typeof value !== 'string') throw new ValueError(`expected a user id, got ${describe(value)}`);
    return value;
  },
  convert(value, _field, ctx) {
    return typeof value === 'string' && ctx.isBaseMember(value) ? value : null;
  },
};
