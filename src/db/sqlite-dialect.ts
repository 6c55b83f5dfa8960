// The SQLite spelling of the SQL the field types and the record store build (RecordDialect).
import type { ColumnStorage } from '../fields/field-type.js';
import type { RecordDialect } from './sql-client.js';

const COLUMN_TYPES: Record<ColumnStorage, string> = { text: 'TEXT', json: 'TEXT', real: 'REAL', integer: 'INTEGER' };

export const sqliteDialect: RecordDialect = {
  columnType: (storage) => COLUMN_TYPES[storage],
  placeholder: () => '?',
  true: '1',
  false: '0',
  newline: 'char(10)',
  emptyJsonArray: `'[]'`,
  // lower() folds ASCII letters only; LIKE ignores ASCII case only, so the lower-cased pattern decides the rest.
  likeLower: (expr, pattern) => `lower(${expr}) LIKE ${pattern} ESCAPE '\\'`,
  jsonElements: (expr) => `json_each(${expr})`,
  joinLines: (expr) => `group_concat(${expr}, char(10))`,
  // SQLite's NULL is below every value, so an index on the column in `dir` gives this order read forwards from its first
  // value (the planner skips the NULLs and reads them last): no expression index on (col IS NULL) needed.
  emptiesLast: (col, dir) => `${col} ${dir} NULLS LAST`,

  baseSchema: () => null,
  seqColumn: '_seq INTEGER PRIMARY KEY AUTOINCREMENT',
  filterIndexTail: '',
  // An index cannot say NULLS LAST here, nor needs to (emptiesLast). The filter index, on the column and the rowid
  // (`_seq`), serves the ascending sort, so an indexed field has one more index, not two: at 1,000,000 records each
  // index on a text column cost about 10 µs of every record written (README, performance).
  sortIndexTerms(terms, col) {
    const plain = terms.replace(/ NULLS LAST$/, '');
    return plain === `${col} ASC` ? null : plain;
  },
  junctionTableOptions: ' WITHOUT ROWID',
  insertOrIgnore: (table, rest) => `INSERT OR IGNORE INTO ${table} ${rest}`,
  insertOrReplace: (table, columns, _key, values) => `INSERT OR REPLACE INTO ${table} (${columns.join(', ')}) VALUES (${values.join(', ')})`,
  forUpdate: '',
  jsonText: (expr) => expr,
  search: {
    // FTS5 with the trigram tokenizer: substring matches, case folded by the tokenizer; rowid = _seq.
    create: (table) => [`CREATE VIRTUAL TABLE ${table} USING fts5(text, tokenize = 'trigram')`, ...searchTableSettings(table)],
    key: 'rowid',
    stored: (text) => text,
    match(table, terms, p) {
      // Terms of three or more characters use the trigram index; shorter ones scan the text.
      const long = terms.filter((t) => [...t].length >= 3);
      const short = terms.filter((t) => [...t].length < 3);
      const conds: string[] = [];
      if (long.length) conds.push(`${table} MATCH ${p.bind(long.map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND '))}`);
      // unicode_lower (registered by sqlite-record-store.ts) folds case beyond ASCII, as the trigram index does.
      for (const t of short) conds.push(`instr(unicode_lower(text), ${p.bind(t.toLowerCase())}) > 0`);
      return conds.join(' AND ');
    },
  },
};

/**
 * How a search table merges its segments. FTS5 merges a level once 4 segments pile up on it (automerge); at 16 it merges
 * a quarter as often, but would then meet its crisis merge (16 by default), which merges a whole level in one write: up
 * to 7 s at 1,000,000 records. With the crisis merge at 64, indexing 1,000,000 records cost 26.9 µs a record against
 * 43.6, no chunk of 2,000 took longer than 124 ms (188 with the defaults), and searches were as fast (README, performance).
 * Kept in the table (its _config); sqlite-store.ts sets them on tables created before they existed.
 */
export const searchTableSettings = (table: string) => [
  `INSERT INTO ${table} (${table}, rank) VALUES ('automerge', 16)`,
  `INSERT INTO ${table} (${table}, rank) VALUES ('crisismerge', 64)`,
];
