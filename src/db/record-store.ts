// The record store: the one module that writes SQL for user tables (one SQLite table per user table, one column per field).
// Callers run these inside their own transaction; every function here is one step of a unit of work.
import type Database from 'better-sqlite3';
import type { FieldDef, FieldType, Operator } from '../fields/field-type.js';
import { fieldType } from '../fields/registry.js';

export interface Condition {
  field: FieldDef;
  op: Operator;
  /** The operand in stored form; an array for in/not_in/has_*; absent for is_empty/is_not_empty. */
  value?: unknown;
}
export interface ConditionGroup {
  conjunction: 'and' | 'or';
  conditions: Array<Condition | ConditionGroup>;
}
export interface SortKey {
  field: FieldDef;
  direction: 'asc' | 'desc';
}
export interface StoredRow {
  seq: number;
  id: string;
  createdAt: string;
  updatedAt: string;
  createdBy: string | null;
  updatedBy: string | null;
  /** Raw stored values by field id (link fields: arrays of record ids). */
  values: Record<string, unknown>;
}
export interface RowWrite {
  id: string;
  /** Stored values by field id; link fields take arrays of record ids. */
  values: Map<string, unknown>;
}

export const recordTable = (tableId: string) => `"rt_${tableId}"`;
const column = (fieldId: string) => `"c_${fieldId}"`;
const linkTable = (fieldId: string) => `"lnk_${fieldId}"`;
const indexName = (fieldId: string) => `"ix_${fieldId}"`;
/** The keyword-search index of a table: FTS5 with the trigram tokenizer (substring matches), rowid = _seq. */
const searchTable = (tableId: string) => `"fts_${tableId}"`;

/**
 * The text a record is found by: its searchable values joined by newlines. Search terms hold no whitespace,
 * so a term never matches across two values.
 */
function searchTextExpr(fields: FieldDef[]): string {
  const parts = fields.filter((f) => fieldType(f.type).searchable).map((f) =>
    fieldType(f.type).storage === 'json'
      ? `coalesce((SELECT group_concat(value, char(10)) FROM json_each(${column(f.id)})), '')`
      : `coalesce(${column(f.id)}, '')`);
  return parts.length ? parts.join(` || char(10) || `) : `''`;
}

/**
 * ORDER BY terms for a field: empty values last in both directions (text-like values are never stored as '').
 * An indexed field has an index on exactly these terms, so a sort on it reads the index in order.
 */
function sortTerms(field: FieldDef, col: string, direction: 'asc' | 'desc'): string {
  const type = fieldType(field.type);
  const dir = direction === 'desc' ? 'DESC' : 'ASC';
  if (type.storage === 'system') return `t.${type.systemColumn} ${dir}`;
  if (field.type === 'checkbox') return `coalesce(${col}, 0) ${dir}`;
  return `(${col} IS NULL), ${col} ${dir}`;
}

const SQL_TYPE = { text: 'TEXT', json: 'TEXT', real: 'REAL', integer: 'INTEGER' } as const;

function hasColumn(type: FieldType): type is FieldType & { storage: keyof typeof SQL_TYPE } {
  return type.storage in SQL_TYPE;
}

export function createRecordStore(sqlite: Database.Database) {
  sqlite.function('unicode_lower', { deterministic: true }, (v: unknown) => (v == null ? null : String(v).toLowerCase()));
  // Statements are cached by their text; a schema change alters the text of every statement that it affects.
  const statements = new Map<string, Database.Statement>();
  function stmt(sql: string): Database.Statement {
    let s = statements.get(sql);
    if (!s) {
      if (statements.size > 1000) statements.clear();
      s = sqlite.prepare(sql);
      statements.set(sql, s);
    }
    return s;
  }

  function columnExpr(field: FieldDef): string {
    const type = fieldType(field.type);
    if (type.storage === 'system') return `t.${type.systemColumn}`;
    return `t.${column(field.id)}`;
  }

  function compileCondition(c: Condition, params: unknown[]): string {
    const type = fieldType(c.field.type);
    if (type.storage === 'link') return compileLinkCondition(c, params);
    const col = columnExpr(c.field);
    const isJson = type.storage === 'json';
    const isCheckbox = c.field.type === 'checkbox';
    const list = (values: unknown[]) => {
      params.push(...values);
      return values.map(() => '?').join(',');
    };
    const like = (pattern: string) => {
      params.push(pattern);
      return `lower(${col}) LIKE ? ESCAPE '\\'`;
    };
    const escapeLike = (s: string) => String(s).toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`);
    switch (c.op) {
      case 'eq':
        if (isCheckbox && c.value === 0) return `(${col} IS NULL OR ${col} = 0)`;
        params.push(c.value);
        return `${col} = ?`;
      case 'neq':
        if (isCheckbox && c.value === 0) return `${col} = 1`;
        params.push(c.value);
        return `(${col} IS NULL OR ${col} <> ?)`;
      case 'gt': params.push(c.value); return `${col} > ?`;
      case 'gte': params.push(c.value); return `${col} >= ?`;
      case 'lt': params.push(c.value); return `${col} < ?`;
      case 'lte': params.push(c.value); return `${col} <= ?`;
      case 'contains': return like(`%${escapeLike(c.value as string)}%`);
      case 'not_contains': return `(${col} IS NULL OR NOT ${like(`%${escapeLike(c.value as string)}%`)})`;
      case 'starts_with': return like(`${escapeLike(c.value as string)}%`);
      case 'ends_with': return like(`%${escapeLike(c.value as string)}`);
      case 'in': {
        const values = c.value as unknown[];
        return values.length ? `${col} IN (${list(values)})` : '0';
      }
      case 'not_in': {
        const values = c.value as unknown[];
        return values.length ? `(${col} IS NULL OR ${col} NOT IN (${list(values)}))` : '1';
      }
      case 'has_any':
      case 'has_all':
      case 'has_none': {
        const values = [...new Set(c.value as unknown[])];
        if (!isJson) {
          // A user cell is a set of at most one element.
          if (c.op === 'has_any') return values.length ? `${col} IN (${list(values)})` : '0';
          if (c.op === 'has_none') return values.length ? `(${col} IS NULL OR ${col} NOT IN (${list(values)}))` : '1';
          if (values.length === 0) return '1';
          if (values.length > 1) return '0';
          params.push(values[0]);
          return `${col} = ?`;
        }
        if (values.length === 0) return c.op === 'has_any' ? '0' : '1';
        const inner = () => `SELECT 1 FROM json_each(${col}) WHERE value IN (${list(values)})`;
        if (c.op === 'has_any') return `EXISTS (${inner()})`;
        if (c.op === 'has_none') return `NOT EXISTS (${inner()})`;
        return `(SELECT COUNT(DISTINCT value) FROM json_each(${col}) WHERE value IN (${list(values)})) = ${values.length}`;
      }
      case 'is_empty':
        if (type.storage === 'system') return '0';
        if (isCheckbox) return `(${col} IS NULL OR ${col} = 0)`;
        if (isJson) return `(${col} IS NULL OR ${col} = '[]')`;
        return type.storage === 'text' ? `(${col} IS NULL OR ${col} = '')` : `${col} IS NULL`;
      case 'is_not_empty':
        if (type.storage === 'system') return '1';
        if (isCheckbox) return `${col} = 1`;
        if (isJson) return `(${col} IS NOT NULL AND ${col} <> '[]')`;
        return type.storage === 'text' ? `(${col} IS NOT NULL AND ${col} <> '')` : `${col} IS NOT NULL`;
    }
  }

  function compileLinkCondition(c: Condition, params: unknown[]): string {
    const lt = linkTable(c.field.id);
    if (c.op === 'is_empty') return `NOT EXISTS (SELECT 1 FROM ${lt} l WHERE l.src = t._id)`;
    if (c.op === 'is_not_empty') return `EXISTS (SELECT 1 FROM ${lt} l WHERE l.src = t._id)`;
    const values = [...new Set(c.value as string[])];
    if (values.length === 0) return c.op === 'has_any' ? '0' : '1';
    params.push(...values);
    const marks = values.map(() => '?').join(',');
    if (c.op === 'has_any') return `EXISTS (SELECT 1 FROM ${lt} l WHERE l.src = t._id AND l.dst IN (${marks}))`;
    if (c.op === 'has_none') return `NOT EXISTS (SELECT 1 FROM ${lt} l WHERE l.src = t._id AND l.dst IN (${marks}))`;
    return `(SELECT COUNT(*) FROM ${lt} l WHERE l.src = t._id AND l.dst IN (${marks})) = ${values.length}`;
  }

  function compileGroup(g: ConditionGroup, params: unknown[]): string {
    if (g.conditions.length === 0) return '1';
    const parts = g.conditions.map((c) => ('conjunction' in c ? compileGroup(c, params) : compileCondition(c, params)));
    return `(${parts.join(g.conjunction === 'and' ? ' AND ' : ' OR ')})`;
  }

  function sortExpr(key: SortKey): string {
    return sortTerms(key.field, `t.${column(key.field.id)}`, key.direction);
  }

  function selectList(fields: FieldDef[]): string {
    const cols = ['t._seq', 't._id', 't._created_at', 't._updated_at', 't._created_by', 't._updated_by'];
    for (const f of fields) if (hasColumn(fieldType(f.type))) cols.push(`t.${column(f.id)}`);
    return cols.join(', ');
  }

  function toRows(fields: FieldDef[], raw: unknown[][]): StoredRow[] {
    const colFields = fields.filter((f) => hasColumn(fieldType(f.type)));
    const rows = raw.map((r) => {
      const values: Record<string, unknown> = {};
      for (let i = 0; i < colFields.length; i++) values[colFields[i].id] = r[6 + i];
      return {
        seq: r[0] as number, id: r[1] as string, createdAt: r[2] as string, updatedAt: r[3] as string,
        createdBy: r[4] as string | null, updatedBy: r[5] as string | null, values,
      };
    });
    loadLinks(fields, rows);
    return rows;
  }

  /** One query per link field for a whole page, never one per row. */
  function loadLinks(fields: FieldDef[], rows: StoredRow[]) {
    const links = fields.filter((f) => f.type === 'link');
    if (!links.length || !rows.length) return;
    const ids = rows.map((r) => r.id);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const f of links) {
      for (const r of rows) r.values[f.id] = [];
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const found = stmt(`SELECT src, dst FROM ${linkTable(f.id)} WHERE src IN (${chunk.map(() => '?').join(',')}) ORDER BY src, pos`)
          .raw().all(...chunk) as [string, string][];
        for (const [src, dst] of found) (byId.get(src)!.values[f.id] as string[]).push(dst);
      }
    }
  }

  /** Marks already-indexed records whose search text changed. */
  function markSearchDirty(tableId: string, ids: string[]) {
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      stmt(`INSERT OR IGNORE INTO search_dirty (table_id, seq) SELECT ?, _seq FROM ${recordTable(tableId)}
        WHERE _id IN (${chunk.map(() => '?').join(',')}) AND _seq <= (SELECT indexed_seq FROM search_state WHERE table_id = ?)`).run(tableId, ...chunk, tableId);
    }
  }

  function writeLinks(fieldId: string, recordId: string, targets: string[], replace: boolean) {
    if (replace) stmt(`DELETE FROM ${linkTable(fieldId)} WHERE src = ?`).run(recordId);
    const ins = stmt(`INSERT INTO ${linkTable(fieldId)} (src, dst, pos) VALUES (?, ?, ?)`);
    targets.forEach((dst, pos) => ins.run(recordId, dst, pos));
  }

  return {
    createTable(tableId: string) {
      sqlite.exec(`CREATE TABLE ${recordTable(tableId)} (
        _seq INTEGER PRIMARY KEY AUTOINCREMENT,
        _id TEXT NOT NULL UNIQUE,
        _created_at TEXT NOT NULL,
        _updated_at TEXT NOT NULL,
        _created_by TEXT,
        _updated_by TEXT)`);
      sqlite.exec(`CREATE VIRTUAL TABLE ${searchTable(tableId)} USING fts5(text, tokenize = 'trigram')`);
      stmt('INSERT OR REPLACE INTO search_state (table_id, indexed_seq) VALUES (?, 0)').run(tableId);
    },

    /** Forgets the search index of a table after the set of searchable fields changed; it is rebuilt in the background. */
    resetSearch(tableId: string) {
      sqlite.exec(`DELETE FROM ${searchTable(tableId)}`);
      stmt('UPDATE search_state SET indexed_seq = 0 WHERE table_id = ?').run(tableId);
      stmt('DELETE FROM search_dirty WHERE table_id = ?').run(tableId);
    },

    /**
     * Brings the search index of a table up to date, at most `limit` rows at a time; true when rows are left.
     * Writes only mark what changed, so a batch of records costs no tokenizing on the request path.
     */
    syncSearch(tableId: string, fields: FieldDef[], limit = 5000): boolean {
      const fts = searchTable(tableId);
      const rt = recordTable(tableId);
      const text = searchTextExpr(fields);
      const watermark = (stmt('SELECT indexed_seq FROM search_state WHERE table_id = ?').pluck().get(tableId) as number | undefined) ?? 0;
      const dirty = stmt('SELECT seq FROM search_dirty WHERE table_id = ? ORDER BY seq LIMIT ?').pluck().all(tableId, limit) as number[];
      if (dirty.length) {
        const marks = dirty.map(() => '?').join(',');
        sqlite.prepare(`DELETE FROM ${fts} WHERE rowid IN (${marks})`).run(dirty);
        sqlite.prepare(`INSERT INTO ${fts} (rowid, text) SELECT _seq, ${text} FROM ${rt} WHERE _seq IN (${marks})`).run(dirty);
        sqlite.prepare(`DELETE FROM search_dirty WHERE table_id = ? AND seq IN (${marks})`).run(tableId, ...dirty);
      }
      const top = stmt(`SELECT max(_seq) FROM (SELECT _seq FROM ${rt} WHERE _seq > ? ORDER BY _seq LIMIT ?)`).pluck().get(watermark, limit) as number | null;
      if (top !== null) {
        stmt(`INSERT INTO ${fts} (rowid, text) SELECT _seq, ${text} FROM ${rt} WHERE _seq > ? AND _seq <= ?`).run(watermark, top);
        stmt('INSERT OR REPLACE INTO search_state (table_id, indexed_seq) VALUES (?, ?)').run(tableId, top);
      }
      return dirty.length === limit || (top !== null && (stmt(`SELECT EXISTS (SELECT 1 FROM ${rt} WHERE _seq > ?)`).pluck().get(top) as number) === 1);
    },

    dropTable(tableId: string, fields: FieldDef[]) {
      for (const f of fields) if (f.type === 'link') sqlite.exec(`DROP TABLE IF EXISTS ${linkTable(f.id)}`);
      sqlite.exec(`DROP TABLE IF EXISTS ${recordTable(tableId)}`);
      sqlite.exec(`DROP TABLE IF EXISTS ${searchTable(tableId)}`);
      stmt('DELETE FROM search_state WHERE table_id = ?').run(tableId);
      stmt('DELETE FROM search_dirty WHERE table_id = ?').run(tableId);
      statements.clear();
    },

    addField(tableId: string, field: FieldDef) {
      const type = fieldType(field.type);
      if (type.storage === 'link') {
        sqlite.exec(`CREATE TABLE ${linkTable(field.id)} (src TEXT NOT NULL, dst TEXT NOT NULL, pos INTEGER NOT NULL, PRIMARY KEY (src, dst)) WITHOUT ROWID`);
        sqlite.exec(`CREATE INDEX "lnkdst_${field.id}" ON ${linkTable(field.id)} (dst)`);
      } else if (hasColumn(type)) {
        sqlite.exec(`ALTER TABLE ${recordTable(tableId)} ADD COLUMN ${column(field.id)} ${SQL_TYPE[type.storage]}`);
      }
      if (field.indexed) this.setIndexed(tableId, field, true);
    },

    dropField(tableId: string, field: FieldDef) {
      const type = fieldType(field.type);
      if (type.storage === 'link') sqlite.exec(`DROP TABLE IF EXISTS ${linkTable(field.id)}`);
      else if (hasColumn(type)) {
        this.setIndexed(tableId, field, false);
        sqlite.exec(`ALTER TABLE ${recordTable(tableId)} DROP COLUMN ${column(field.id)}`);
      }
      statements.clear();
    },

    /**
     * Indexes for a field: one on the column for filters, and one per sort direction on the sort terms
     * (link fields are indexed by their junction table, system fields by design).
     */
    setIndexed(tableId: string, field: FieldDef, on: boolean) {
      if (!hasColumn(fieldType(field.type))) return;
      const sortIndex = (dir: 'asc' | 'desc') => `"ixs${dir}_${field.id}"`;
      if (on) {
        const rt = recordTable(tableId);
        sqlite.exec(`CREATE INDEX IF NOT EXISTS ${indexName(field.id)} ON ${rt} (${column(field.id)})`);
        for (const dir of ['asc', 'desc'] as const) {
          const terms = sortTerms(field, column(field.id), dir);
          sqlite.exec(`CREATE INDEX IF NOT EXISTS ${sortIndex(dir)} ON ${rt} (${terms}, _seq)`);
        }
      } else {
        sqlite.exec(`DROP INDEX IF EXISTS ${indexName(field.id)}`);
        for (const dir of ['asc', 'desc'] as const) sqlite.exec(`DROP INDEX IF EXISTS ${sortIndex(dir)}`);
      }
      statements.clear();
    },

    /** Every record's raw value of one field, for a type change. */
    readField(tableId: string, field: FieldDef): Array<{ id: string; raw: unknown }> {
      const type = fieldType(field.type);
      if (type.storage === 'link') {
        const rows = sqlite.prepare(`SELECT src, dst FROM ${linkTable(field.id)} ORDER BY src, pos`).raw().all() as [string, string][];
        const byId = new Map<string, string[]>();
        for (const [src, dst] of rows) byId.set(src, [...(byId.get(src) ?? []), dst]);
        return [...byId].map(([id, raw]) => ({ id, raw }));
      }
      const expr = type.storage === 'system' ? type.systemColumn : column(field.id);
      return (sqlite.prepare(`SELECT _id, ${expr} FROM ${recordTable(tableId)} WHERE ${expr} IS NOT NULL`).raw().all() as [string, unknown][])
        .map(([id, raw]) => ({ id, raw }));
    },

    /** Writes one field's value for many records, without touching their modification time. */
    fillField(tableId: string, field: FieldDef, values: Array<{ id: string; stored: unknown }>) {
      const type = fieldType(field.type);
      if (type.storage === 'link') {
        for (const v of values) writeLinks(field.id, v.id, v.stored as string[], true);
        return;
      }
      if (!hasColumn(type)) return;
      const upd = stmt(`UPDATE ${recordTable(tableId)} SET ${column(field.id)} = ? WHERE _id = ?`);
      for (const v of values) upd.run(v.stored, v.id);
    },

    insert(tableId: string, fields: FieldDef[], rows: RowWrite[], at: string, by: string | null) {
      const colFields = fields.filter((f) => hasColumn(fieldType(f.type)));
      const linkFields = fields.filter((f) => f.type === 'link');
      const cols = ['_id', '_created_at', '_updated_at', '_created_by', '_updated_by', ...colFields.map((f) => column(f.id))];
      const ins = stmt(`INSERT INTO ${recordTable(tableId)} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
      const args: unknown[] = new Array(cols.length);
      for (const row of rows) {
        args[0] = row.id; args[1] = at; args[2] = at; args[3] = by; args[4] = by;
        for (let i = 0; i < colFields.length; i++) args[5 + i] = row.values.get(colFields[i].id) ?? null;
        ins.run(args);
        for (const f of linkFields) {
          const targets = row.values.get(f.id) as string[] | undefined;
          if (targets?.length) writeLinks(f.id, row.id, targets, false);
        }
      }
    },

    update(tableId: string, fields: FieldDef[], rows: RowWrite[], at: string, by: string | null) {
      const byId = new Map(fields.map((f) => [f.id, f]));
      for (const row of rows) {
        if (row.values.size === 0) continue; // nothing to change: the record keeps its modification time
        const sets = ['_updated_at = ?', '_updated_by = ?'];
        const args: unknown[] = [at, by];
        for (const [fieldId, stored] of row.values) {
          const f = byId.get(fieldId)!;
          if (f.type === 'link') writeLinks(f.id, row.id, (stored as string[] | null) ?? [], true);
          else {
            sets.push(`${column(fieldId)} = ?`);
            args.push(stored);
          }
        }
        args.push(row.id);
        stmt(`UPDATE ${recordTable(tableId)} SET ${sets.join(', ')} WHERE _id = ?`).run(args);
      }
      const searchable = new Set(fields.filter((f) => fieldType(f.type).searchable).map((f) => f.id));
      markSearchDirty(tableId, rows.filter((r) => [...r.values.keys()].some((id) => searchable.has(id))).map((r) => r.id));
    },

    /** Deletes records and every link to them; `linksIn` are the link fields of this table, `linksTo` those pointing at it. */
    delete(tableId: string, ids: string[], linksIn: FieldDef[], linksTo: FieldDef[]) {
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const marks = chunk.map(() => '?').join(',');
        stmt(`DELETE FROM ${searchTable(tableId)} WHERE rowid IN (SELECT _seq FROM ${recordTable(tableId)} WHERE _id IN (${marks}))`).run(chunk);
        stmt(`DELETE FROM search_dirty WHERE table_id = ? AND seq IN (SELECT _seq FROM ${recordTable(tableId)} WHERE _id IN (${marks}))`).run(tableId, ...chunk);
        stmt(`DELETE FROM ${recordTable(tableId)} WHERE _id IN (${marks})`).run(chunk);
        for (const f of linksIn) stmt(`DELETE FROM ${linkTable(f.id)} WHERE src IN (${marks})`).run(chunk);
        for (const f of linksTo) stmt(`DELETE FROM ${linkTable(f.id)} WHERE dst IN (${marks})`).run(chunk);
      }
    },

    /** Which of `ids` exist in the table. */
    existing(tableId: string, ids: string[]): Set<string> {
      const found = new Set<string>();
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const rows = stmt(`SELECT _id FROM ${recordTable(tableId)} WHERE _id IN (${chunk.map(() => '?').join(',')})`).pluck().all(chunk) as string[];
        for (const id of rows) found.add(id);
      }
      return found;
    },

    getMany(tableId: string, fields: FieldDef[], ids: string[]): StoredRow[] {
      const out: StoredRow[] = [];
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const raw = stmt(`SELECT ${selectList(fields)} FROM ${recordTable(tableId)} t WHERE t._id IN (${chunk.map(() => '?').join(',')})`)
          .raw().all(chunk) as unknown[][];
        out.push(...toRows(fields, raw));
      }
      const order = new Map(ids.map((id, i) => [id, i]));
      return out.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    },

    list(tableId: string, fields: FieldDef[], q: { where?: ConditionGroup; sort?: SortKey[]; limit: number; offset: number; withTotal: boolean }) {
      const params: unknown[] = [];
      const where = q.where ? compileGroup(q.where, params) : '';
      const whereSql = where && where !== '1' ? ` WHERE ${where}` : '';
      const order = [...(q.sort ?? []).map(sortExpr), 't._seq ASC'].join(', ');
      const raw = stmt(`SELECT ${selectList(fields)} FROM ${recordTable(tableId)} t${whereSql} ORDER BY ${order} LIMIT ? OFFSET ?`)
        .raw().all(...params, q.limit, q.offset) as unknown[][];
      const total = q.withTotal
        ? (stmt(`SELECT COUNT(*) FROM ${recordTable(tableId)} t${whereSql}`).pluck().get(...params) as number)
        : undefined;
      return { rows: toRows(fields, raw), total };
    },

    /**
     * Records whose search text holds every term (case-insensitive substrings), in creation order.
     * Terms of three or more characters use the trigram index; shorter ones are checked with LIKE.
     */
    search(tableId: string, fields: FieldDef[], terms: string[], limit: number, offset: number) {
      const long = terms.filter((t) => [...t].length >= 3);
      const short = terms.filter((t) => [...t].length < 3);
      const conds: string[] = [];
      const params: unknown[] = [];
      if (long.length) {
        conds.push(`${searchTable(tableId)} MATCH ?`);
        params.push(long.map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND '));
      }
      // Short terms scan the search text; unicode_lower folds case beyond ASCII, as the trigram index does.
      for (const t of short) {
        conds.push(`instr(unicode_lower(text), ?) > 0`);
        params.push(t.toLowerCase());
      }
      const where = conds.join(' AND ');
      const seqs = stmt(`SELECT rowid FROM ${searchTable(tableId)} WHERE ${where} ORDER BY rowid LIMIT ? OFFSET ?`).pluck().all(...params, limit, offset) as number[];
      const total = stmt(`SELECT COUNT(*) FROM ${searchTable(tableId)} WHERE ${where}`).pluck().get(...params) as number;
      const raw = seqs.length
        ? (stmt(`SELECT ${selectList(fields)} FROM ${recordTable(tableId)} t WHERE t._seq IN (${seqs.map(() => '?').join(',')}) ORDER BY t._seq`).raw().all(seqs) as unknown[][])
        : [];
      return { rows: toRows(fields, raw), total };
    },

    /** Which of `ids` match a filter (workflow trigger conditions use the same SQL as list filters). */
    matching(tableId: string, where: ConditionGroup, ids: string[]): Set<string> {
      const found = new Set<string>();
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const params: unknown[] = [];
        const cond = compileGroup(where, params);
        const rows = stmt(`SELECT t._id FROM ${recordTable(tableId)} t WHERE t._id IN (${chunk.map(() => '?').join(',')}) AND ${cond}`)
          .pluck().all(...chunk, ...params) as string[];
        for (const id of rows) found.add(id);
      }
      return found;
    },

    count(tableId: string): number {
      return stmt(`SELECT COUNT(*) FROM ${recordTable(tableId)}`).pluck().get() as number;
    },

    forgetStatements() {
      statements.clear();
    },
  };
}

export type RecordStore = ReturnType<typeof createRecordStore>;
