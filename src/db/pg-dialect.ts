// The PostgreSQL spelling of the SQL the field types and the record store build (RecordDialect), chosen so that every
// filter, sort and search answers exactly as on SQLite (contract sections 4, 6 and 11).
import type { ColumnStorage } from '../fields/field-type.js';
import type { RecordDialect } from './sql-client.js';

// Text compares and sorts by its bytes (code points), as SQLite's BINARY collation does, whatever the database's locale.
const COLUMN_TYPES: Record<ColumnStorage, string> = {
  text: 'TEXT COLLATE "C"', json: 'JSONB', real: 'DOUBLE PRECISION', integer: 'BIGINT',
};

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A LIKE pattern finding `s` as a substring (`\`, PostgreSQL's default LIKE escape, escapes `%`, `_` and `\`). */
const substring = (s: string) => `%${s.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

export const pgDialect: RecordDialect = {
  columnType: (storage) => COLUMN_TYPES[storage],
  // A fractional (or huge) number compared with a BIGINT column would otherwise be read as a BIGINT and refused.
  placeholder: (n, value) => (typeof value === 'number' && !Number.isSafeInteger(value) ? `$${n}::float8` : `$${n}`),
  true: 'TRUE',
  false: 'FALSE',
  newline: 'chr(10)',
  emptyJsonArray: `'[]'::jsonb`,
  // SQLite's lower() folds ASCII letters only (and its LIKE ignores ASCII case only): fold exactly those. Backslash is
  // LIKE's default escape here, so no ESCAPE clause (whose literal would depend on standard_conforming_strings).
  likeLower: (expr, pattern) => `translate(${expr}, '${UPPER}', '${UPPER.toLowerCase()}') LIKE ${pattern}`,
  jsonElements: (expr) => `jsonb_array_elements_text(${expr})`,
  joinLines: (expr) => `string_agg(${expr}, chr(10))`,
  emptiesLast: (col, dir) => `(${col} IS NULL), ${col} ${dir}`,

  baseSchema: (baseId) => `"b_${baseId}"`,
  seqColumn: '_seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY',
  filterIndexTail: ', _seq',
  sortIndexTerms: (terms) => terms,
  junctionTableOptions: '',
  // unnest() returns the arrays' elements in order, so `_seq` numbers the rows in the order given. Array elements are
  // read by each type's input function, as `$n` parameters are.
  insertArrays: (table, columns, types) =>
    `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`,
  inArray: (expr, n) => `${expr} = ANY($${n}::text[])`,
  insertOrIgnore: (table, rest) => `INSERT INTO ${table} ${rest} ON CONFLICT DO NOTHING`,
  insertOrReplace(table, columns, key, values) {
    const set = columns.filter((c) => !key.includes(c)).map((c) => `${c} = EXCLUDED.${c}`);
    const onConflict = set.length ? `DO UPDATE SET ${set.join(', ')}` : 'DO NOTHING';
    return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values.join(', ')}) ON CONFLICT (${key.join(', ')}) ${onConflict}`;
  },
  forUpdate: ' FOR UPDATE',
  // jsonb's own order is not SQLite's: sort by the text. Its text differs from JSON.stringify's only by a space after
  // each separator, which leaves the order of any two values as it is on SQLite.
  jsonText: (expr) => `(${expr}::text COLLATE "C")`,
  search: {
    // The text is stored case-folded (ICU's Unicode lower case, as JavaScript's toLowerCase); a trigram index
    // (pg_trgm, created by the migrations) serves LIKE '%term%' for terms of three or more characters.
    create: (table, index) => [
      `CREATE TABLE ${table} (seq BIGINT PRIMARY KEY, text TEXT NOT NULL)`,
      `CREATE INDEX ${index} ON ${table} USING gin (text gin_trgm_ops)`,
    ],
    key: 'seq',
    stored: (text) => `lower((${text}) COLLATE "und-x-icu")`,
    match: (_table, terms, p) => terms.map((t) => `text LIKE ${p.bind(substring(t.toLowerCase()))}`).join(' AND '),
  },
};
