// Runtime values of the formula evaluator: dates, the conversions of API field values, and the text form of every value.
import { normalizeDate } from '../types/date.js';

export type FormulaType = 'number' | 'text' | 'boolean' | 'date';

/**
 * A date while a formula runs: the instant in UTC milliseconds, and whether it came from a date-only value, so that
 * DATEADD by whole days can keep the `YYYY-MM-DD` form and text conversion shows what the field shows.
 */
export class DateValue {
  constructor(readonly ms: number, readonly dateOnly: boolean) {}

  toString(): string {
    const iso = new Date(this.ms).toISOString();
    return this.dateOnly ? iso.slice(0, 10) : iso;
  }
}

/** Every value an expression can produce; `null` is blank (and an empty text is always carried as `null`). */
export type Value = number | string | boolean | DateValue | null;

/** The inputs of one record, by field id, in their API form. */
export type Inputs = (fieldId: string) => unknown;

/** One compiled expression node: evaluating it for a record. */
export type Eval = (inputs: Inputs) => Value;

/** The units of DATETIME_DIFF and DATEADD; UTC has no daylight saving, so a day is always 24 hours. */
export const MS_PER_UNIT: ReadonlyMap<string, number> = new Map([['days', 86_400_000], ['hours', 3_600_000], ['minutes', 60_000]]);

/** JavaScript dates reach ±8.64e15 ms; an arithmetic result beyond that is not a date. */
const MAX_DATE_MS = 8.64e15;

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const NORMALISED_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A finite number, or null: NaN and ±Infinity are "cannot be computed"; -0 becomes 0 so it never shows as `-0`. */
export function finite(n: number): number | null {
  if (!Number.isFinite(n)) return null;
  return n === 0 ? 0 : n;
}

/** A date from epoch milliseconds, or null when the instant is outside what a date can hold. */
export function dateAt(ms: number, dateOnly: boolean): DateValue | null {
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS ? new DateValue(ms, dateOnly) : null;
}

/**
 * Parses `YYYY-MM-DD` or an ISO 8601 date-time (a missing zone is UTC) as the date field type does; null when it is
 * neither. The two forms the service stores are parsed directly, since this runs for every record.
 */
export function parseDate(text: string): DateValue | null {
  const m = DATE_ONLY.exec(text);
  if (m) {
    const ms = Date.UTC(+m[1], +m[2] - 1, +m[3]);
    const d = new Date(ms);
    return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3] ? new DateValue(ms, true) : null;
  }
  if (NORMALISED_INSTANT.test(text)) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? null : new DateValue(ms, false);
  }
  const normalised = normalizeDate(text.trim());
  if (normalised === null) return null;
  return normalised.length === 10 ? parseDate(normalised) : new DateValue(Date.parse(normalised), false);
}

/** The text of a value as `&`, CONCAT and the text functions see it; blank is `""`. */
export function textOf(v: Value): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  return v.toString();
}

/** Text that is empty is blank. */
export function text(s: string): string | null {
  return s === '' ? null : s;
}

// --- API values of referenced fields, read as the formula type their field maps to (see field-types.ts) ---

export function inputNumber(v: unknown): number | null {
  if (typeof v === 'number') return finite(v);
  // A numeric text is accepted so a value that reaches us as text (an aggregate read back from SQL) still computes.
  if (typeof v === 'string' && v.trim() !== '') return finite(Number(v));
  return null;
}

export function inputText(v: unknown): string | null {
  if (typeof v === 'string') return text(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(finite(v)) : null;
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  // multi_select, link and lookup values: their elements' text joined with ", ", blanks left out.
  if (Array.isArray(v)) {
    const parts: string[] = [];
    for (const item of v) {
      const t = Array.isArray(item) ? null : inputText(item);
      if (t !== null) parts.push(t);
    }
    return text(parts.join(', '));
  }
  return null;
}

export function inputBoolean(v: unknown): boolean | null {
  return typeof v === 'boolean' ? v : null;
}

export function inputDate(v: unknown): DateValue | null {
  if (typeof v === 'string') return v === '' ? null : parseDate(v);
  if (v instanceof Date) return dateAt(v.getTime(), false);
  return null;
}

/** The reader of an input value for each formula type. */
export const INPUT: Readonly<Record<FormulaType, (v: unknown) => Value>> = {
  number: inputNumber,
  text: inputText,
  boolean: inputBoolean,
  date: inputDate,
};

/** The value a formula field reads: dates in their API string form, an empty text or a non-finite number as null. */
export function output(v: Value): number | string | boolean | null {
  if (v instanceof DateValue) return v.toString();
  if (typeof v === 'number') return finite(v);
  if (v === '') return null;
  return v;
}

/** Equality where blank equals only blank, dates compare as instants, and otherwise values of one type compare exactly. */
export function equal(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  if (a instanceof DateValue) return b instanceof DateValue && a.ms === b.ms;
  return a === b;
}

/** Orders two non-blank values of one type (number, text by UTF-16 code units, or date by instant). */
export function compare(a: Exclude<Value, null>, b: Exclude<Value, null>): number {
  const x = a instanceof DateValue ? a.ms : a;
  const y = b instanceof DateValue ? b.ms : b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Rounds half away from zero to `digits` decimals (negative digits round to tens, hundreds...). It works on the
 * decimal form of the number, so 1.005 rounds to 1.01 as written rather than as its binary approximation 1.00499...
 */
export function roundHalfAway(x: number, digits: number): number | null {
  const d = Math.trunc(digits);
  if (!Number.isFinite(x) || !Number.isFinite(d)) return null;
  // Beyond 2^52 at the target scale a double has no fractional part left to round.
  if (Math.abs(x) * 10 ** d >= 2 ** 52) return finite(x);
  const [mantissa, exponent] = Math.abs(x).toExponential().split('e');
  const shifted = Math.round(Number(`${mantissa}e${Number(exponent) + d}`));
  const r = Number(`${shifted}e${-d}`);
  return finite(x < 0 ? -r : r);
}

/** The characters of a text as a person counts them (code points, so an emoji is one). */
export function chars(s: string): string[] {
  return Array.from(s);
}
