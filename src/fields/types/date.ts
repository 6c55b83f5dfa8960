// date: `YYYY-MM-DD`, or a date-time normalised to UTC `YYYY-MM-DDTHH:MM:SS.sssZ`.
import { describe, noSettings, ORDERED_OPERATORS, ValueError, type FieldType } from '../field-type.js';
import { columnFilter, emptiesLast, EMPTY_TEXT } from './sql.js';

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Parses a date or date-time string into its stored form, or returns null when it is not one. */
export function normalizeDate(value: string): string | null {
  const m = DATE_ONLY.exec(value);
  if (m) {
    const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
    return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3] ? value : null;
  }
  if (!DATE_TIME.test(value)) return null;
  // A date-time without a zone is taken as UTC, so the stored value never depends on the server's zone.
  const withZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`;
  const t = Date.parse(withZone.replace(' ', 'T'));
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

export function dateOperand(value: unknown): string {
  if (typeof value !== 'string') throw new ValueError(`expected a date string, got ${describe(value)}`);
  const d = normalizeDate(value);
  if (d === null) throw new ValueError(`"${value.slice(0, 40)}" is not a YYYY-MM-DD date or ISO 8601 date-time`);
  return d;
}

export const date: FieldType = {
  name: 'date',
  storage: 'text',
  operators: ORDERED_OPERATORS,
  filterSql: columnFilter(EMPTY_TEXT),
  sortTerms: emptiesLast,
  normalizeSettings: noSettings('date'),
  toStored: (value) => dateOperand(value),
  fromStored: (raw) => raw ?? null,
  convert(value) {
    if (typeof value === 'string') return normalizeDate(value.trim());
    return null;
  },
};
