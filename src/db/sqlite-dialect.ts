// The SQLite spelling of the SQL field types build (SqlDialect), and the parameter list of one statement.
import type { ColumnStorage, SqlDialect, SqlParams } from '../fields/field-type.js';

const COLUMN_TYPES: Record<ColumnStorage, string> = { text: 'TEXT', json: 'TEXT', real: 'REAL', integer: 'INTEGER' };

export const sqliteDialect: SqlDialect = {
  columnType: (storage) => COLUMN_TYPES[storage],
  placeholder: () => '?',
  true: '1',
  false: '0',
  newline: 'char(10)',
  emptyJsonArray: `'[]'`,
  likeLower: (expr, pattern) => `lower(${expr}) LIKE ${pattern} ESCAPE '\\'`,
  jsonElements: (expr) => `json_each(${expr})`,
  joinLines: (expr) => `group_concat(${expr}, char(10))`,
};

/** Collects the values bound while a statement's text is built; `values` is passed to the statement in the same order. */
export class Params implements SqlParams {
  readonly values: unknown[] = [];
  constructor(readonly dialect: SqlDialect) {}
  bind(value: unknown): string {
    this.values.push(value);
    return this.dialect.placeholder(this.values.length);
  }
  bindAll(values: readonly unknown[]): string {
    return values.map((v) => this.bind(v)).join(',');
  }
}
