// Shared SQL shapes of the field types: the filter of a value held in one column, what "empty" means, empties-last sorting.
import type { FieldType, FilterTerm, SortDirection, SqlDialect, SqlParams } from '../field-type.js';

/** What an empty cell is in SQL, as an `is_empty` and an `is_not_empty` condition on the column `col`. */
export interface Emptiness {
  isEmpty(col: string, d: SqlDialect): string;
  isNotEmpty(col: string, d: SqlDialect): string;
}

/** Numbers, booleans and read-only values: only NULL is empty. */
export const EMPTY_IS_NULL: Emptiness = {
  isEmpty: (col) => `${col} IS NULL`,
  isNotEmpty: (col) => `${col} IS NOT NULL`,
};
/** Strings: NULL or '' (the service never stores '', but a column may hold it from elsewhere). */
export const EMPTY_TEXT: Emptiness = {
  isEmpty: (col) => `(${col} IS NULL OR ${col} = '')`,
  isNotEmpty: (col) => `(${col} IS NOT NULL AND ${col} <> '')`,
};
/** The record table's own columns are always set. */
export const NEVER_EMPTY: Emptiness = {
  isEmpty: (_col, d) => d.false,
  isNotEmpty: (_col, d) => d.true,
};

const escapeLike = (s: string) => String(s).toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`);

/**
 * The filter of a value held in one column: comparisons, text matching, lists, and has_* reading a single value as a set
 * of at most one element.
 */
export function columnFilter(empty: Emptiness): FieldType['filterSql'] {
  return ({ op, value, col }: FilterTerm, p: SqlParams): string => {
    const d = p.dialect;
    const like = (pattern: string) => d.likeLower(col, p.bind(pattern));
    switch (op) {
      case 'eq': return `${col} = ${p.bind(value)}`;
      case 'neq': return `(${col} IS NULL OR ${col} <> ${p.bind(value)})`;
      case 'gt': return `${col} > ${p.bind(value)}`;
      case 'gte': return `${col} >= ${p.bind(value)}`;
      case 'lt': return `${col} < ${p.bind(value)}`;
      case 'lte': return `${col} <= ${p.bind(value)}`;
      case 'contains': return like(`%${escapeLike(value as string)}%`);
      case 'not_contains': return `(${col} IS NULL OR NOT ${like(`%${escapeLike(value as string)}%`)})`;
      case 'starts_with': return like(`${escapeLike(value as string)}%`);
      case 'ends_with': return like(`%${escapeLike(value as string)}`);
      case 'in': {
        const values = value as unknown[];
        return values.length ? `${col} IN (${p.bindAll(values)})` : d.false;
      }
      case 'not_in': {
        const values = value as unknown[];
        return values.length ? `(${col} IS NULL OR ${col} NOT IN (${p.bindAll(values)}))` : d.true;
      }
      case 'has_any':
      case 'has_all':
      case 'has_none': {
        // A single value is a set of at most one element.
        const values = [...new Set(value as unknown[])];
        if (op === 'has_any') return values.length ? `${col} IN (${p.bindAll(values)})` : d.false;
        if (op === 'has_none') return values.length ? `(${col} IS NULL OR ${col} NOT IN (${p.bindAll(values)}))` : d.true;
        if (values.length === 0) return d.true;
        if (values.length > 1) return d.false;
        return `${col} = ${p.bind(values[0])}`;
      }
      case 'is_empty': return empty.isEmpty(col, d);
      case 'is_not_empty': return empty.isNotEmpty(col, d);
    }
  };
}

/** ORDER BY terms that put empty (NULL) values last in both directions. */
export const emptiesLast = (col: string, dir: SortDirection, d: SqlDialect) => d.emptiesLast(col, dir);
/** ORDER BY terms of a value that is never empty. */
export const plainSort = (col: string, dir: SortDirection) => `${col} ${dir}`;
