// Raw SQL for the baseline: a hand copy of what src/db/record-store.ts emits for list, insert and read-back of the bench's types.
// Deliberately not imported from src/: the baseline must stay "what a plain implementation would run",
// and the service code is edited concurrently. If record-store.ts changes its SQL, update this copy.

import Database from 'better-sqlite3';

export interface FieldMeta {
  id: string;
  name: string;
  type: string;
  options?: string[] | null;
  /** A formula's or rollup's result type (config.result_type): a boolean result reads 1 as true, like a checkbox. */
  resultType?: string;
}

type Storage = 'text' | 'real' | 'integer' | 'json' | 'link' | 'system';

const STORAGE: Record<string, Storage> = {
  text: 'text', long_text: 'text', email: 'text', url: 'text', phone: 'text', date: 'text', single_select: 'text', user: 'text',
  number: 'real', checkbox: 'integer', rating: 'integer', multi_select: 'json', link: 'link',
  created_time: 'system', last_modified_time: 'system', autonumber: 'system',
  // Computed types store their result in a column; a lookup's is a JSON array.
  formula: 'real', rollup: 'real', count: 'real', lookup: 'json',
};
const SYSTEM_COLUMN: Record<string, string> = { created_time: '_created_at', last_modified_time: '_updated_at', autonumber: '_seq' };

export function storageOf(type: string): Storage {
  const s = STORAGE[type];
  if (!s) throw new Error(`bench/sql.ts: unknown field type ${type}`);
  return s;
}

/** Fields that are a column of the record table, in display order (the order of the SELECT list after the 6 system columns). */
export function columnFields(fields: FieldMeta[]): FieldMeta[] {
  return fields.filter((f) => ['text', 'real', 'integer', 'json'].includes(storageOf(f.type)));
}

export const recordTable = (tableId: string) => `"rt_${tableId}"`;
const column = (fieldId: string) => `"c_${fieldId}"`;

function columnExpr(f: FieldMeta): string {
  return storageOf(f.type) === 'system' ? `t.${SYSTEM_COLUMN[f.type]}` : `t.${column(f.id)}`;
}

export function selectList(fields: FieldMeta[]): string {
  return ['t._seq', 't._id', 't._created_at', 't._updated_at', 't._created_by', 't._updated_by', ...columnFields(fields).map((f) => `t.${column(f.id)}`)].join(', ');
}

/**
 * Stored value → API value, as each type's fromStored does: a checkbox reads 1 as true and empty as false, a boolean
 * formula or rollup empty as null; json is parsed, an empty lookup is [] and an empty count 0.
 */
export function fromStored(f: FieldMeta, raw: unknown): unknown {
  if (f.type === 'checkbox') return raw === 1;
  if (f.resultType === 'boolean') return raw == null ? null : raw === 1;
  if (f.type === 'lookup') return raw == null ? [] : JSON.parse(raw as string);
  if (f.type === 'count') return raw ?? 0;
  if (storageOf(f.type) === 'json') return raw == null ? null : JSON.parse(raw as string);
  return raw ?? null;
}

/** API value → stored value for a write, without the service's validation (the baseline trusts its input). */
export function toStored(f: FieldMeta, value: unknown): unknown {
  if (value === null || value === undefined || value === '') return null;
  if (f.type === 'checkbox') return value ? 1 : 0;
  if (storageOf(f.type) === 'json') return JSON.stringify(value);
  return value;
}

/**
 * The subset of the contract section 4 filter grammar the bench sends: groups (and/or), bare conditions and
 * arrays of conditions, with `eq` only. Emits the same text as record-store compileGroup/compileCondition.
 */
export function compileFilter(raw: unknown, fields: FieldMeta[], params: unknown[]): string {
  const byKey = new Map<string, FieldMeta>();
  for (const f of fields) byKey.set(f.id, f);
  for (const f of fields) byKey.set(f.name, f);
  const cond = (c: Record<string, unknown>): string => {
    const f = byKey.get(String(c.field));
    if (!f) throw new Error(`unknown field ${JSON.stringify(c.field)}`);
    if (c.operator !== 'eq') throw new Error(`baseline supports only eq, got ${String(c.operator)}`);
    const col = columnExpr(f);
    if (f.type === 'checkbox' && c.value === false) return `(${col} IS NULL OR ${col} = 0)`;
    params.push(toStored(f, c.value));
    return `${col} = ?`;
  };
  const group = (node: unknown): string => {
    if (Array.isArray(node)) return join('and', node);
    const g = node as Record<string, unknown>;
    if ('field' in g) return join('and', [g]);
    return join((g.conjunction as 'and' | 'or') ?? 'and', g.conditions as unknown[]);
  };
  const join = (conj: 'and' | 'or', items: unknown[]): string => {
    if (items.length === 0) return '1';
    const parts = items.map((c) => (c && typeof c === 'object' && !Array.isArray(c) && 'field' in c ? cond(c as Record<string, unknown>) : group(c)));
    return `(${parts.join(conj === 'and' ? ' AND ' : ' OR ')})`;
  };
  return group(raw);
}

/**
 * Same ORDER BY terms as record-store sortTerms: empty values last in both directions (text is never stored as ''),
 * spelled as each engine's dialect spells it (emptiesLast).
 */
export function sortExpr(f: FieldMeta, direction: 'asc' | 'desc', engine: 'sqlite' | 'postgres' = 'sqlite'): string {
  const col = columnExpr(f);
  const dir = direction === 'desc' ? 'DESC' : 'ASC';
  if (storageOf(f.type) === 'system') return `${col} ${dir}`;
  if (f.type === 'checkbox') return `coalesce(${col}, 0) ${dir}`;
  return engine === 'sqlite' ? `${col} ${dir} NULLS LAST` : `(${col} IS NULL), ${col} ${dir}`;
}

export interface ListSql {
  pageSql: string;
  countSql: string;
  /** Parameters of the WHERE clause; the page query appends LIMIT and OFFSET. */
  params: unknown[];
}

/** The two statements record-store list() runs for one page with its total. */
export function listSql(tableId: string, fields: FieldMeta[], q: { filter?: unknown; sort?: unknown }, engine: 'sqlite' | 'postgres' = 'sqlite'): ListSql {
  const params: unknown[] = [];
  const where = q.filter !== undefined ? compileFilter(q.filter, fields, params) : '';
  const whereSql = where && where !== '1' ? ` WHERE ${where}` : '';
  const byKey = new Map<string, FieldMeta>([...fields.map((f) => [f.id, f] as const), ...fields.map((f) => [f.name, f] as const)]);
  let keys = (q.sort ?? []) as unknown;
  if (keys && typeof keys === 'object' && !Array.isArray(keys)) keys = [keys];
  const order = [
    ...(keys as Array<{ field: string; direction?: 'asc' | 'desc' }>).map((k) => {
      const f = byKey.get(k.field);
      if (!f) throw new Error(`unknown sort field ${JSON.stringify(k.field)}`);
      return sortExpr(f, k.direction ?? 'asc', engine);
    }),
    't._seq ASC',
  ].join(', ');
  return {
    pageSql: `SELECT ${selectList(fields)} FROM ${recordTable(tableId)} t${whereSql} ORDER BY ${order} LIMIT ? OFFSET ?`,
    countSql: `SELECT COUNT(*) FROM ${recordTable(tableId)} t${whereSql}`,
    params,
  };
}

/** Types whose values go into the keyword-search text (the `searchable` flag of src/fields/types). */
const SEARCHABLE = new Set(['text', 'long_text', 'email', 'url', 'phone', 'single_select', 'multi_select']);

/** The search-index write of record-store indexForSearch() for one chunk of new ids (tables with an fts_ table only). */
export function searchInsertSql(tableId: string, fields: FieldMeta[], n: number): string {
  const parts = fields.filter((f) => SEARCHABLE.has(f.type)).map((f) =>
    storageOf(f.type) === 'json'
      ? `coalesce((SELECT group_concat(value, char(10)) FROM json_each(${column(f.id)})), '')`
      : `coalesce(${column(f.id)}, '')`);
  const text = parts.length ? parts.join(' || char(10) || ') : `''`;
  return `INSERT INTO "fts_${tableId}" (rowid, text) SELECT _seq, ${text} FROM ${recordTable(tableId)} WHERE _id IN (${new Array(n).fill('?').join(',')})`;
}

/** The INSERT of record-store insert(). */
export function insertSql(tableId: string, fields: FieldMeta[]): string {
  const cols = ['_id', '_created_at', '_updated_at', '_created_by', '_updated_by', ...columnFields(fields).map((f) => column(f.id))];
  return `INSERT INTO ${recordTable(tableId)} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
}

/** The read-back of record-store getMany() for one chunk of ids. */
export function getManySql(tableId: string, fields: FieldMeta[], n: number): string {
  return `SELECT ${selectList(fields)} FROM ${recordTable(tableId)} t WHERE t._id IN (${new Array(n).fill('?').join(',')})`;
}

/**
 * The "plain scan" a keyword search would be without the trigram index: each term must occur, case-insensitively
 * (ASCII, as LIKE folds), in some searchable column; creation order; the page and the total, as the service's search
 * answers. Multi-select columns are scanned as their JSON text (the bench table has none).
 */
export function likeSearchSql(tableId: string, fields: FieldMeta[], terms: string[]): ListSql {
  const cols = fields.filter((f) => SEARCHABLE.has(f.type)).map((f) => columnExpr(f));
  const params: unknown[] = [];
  const where = terms.map((term) => {
    const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return `(${cols.map((c) => {
      params.push(pattern);
      return `${c} LIKE ? ESCAPE '\\'`;
    }).join(' OR ')})`;
  }).join(' AND ') || '1';
  return {
    pageSql: `SELECT ${selectList(fields)} FROM ${recordTable(tableId)} t WHERE ${where} ORDER BY t._seq LIMIT ? OFFSET ?`,
    countSql: `SELECT COUNT(*) FROM ${recordTable(tableId)} t WHERE ${where}`,
    params,
  };
}

/** The fields of a table as the bench's SQL needs them, read from the service's database file. */
export function fieldMeta(dbFile: string, tableId: string): FieldMeta[] {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT id, name, type FROM fields WHERE table_id = ? ORDER BY position').all(tableId) as FieldMeta[];
  } finally {
    db.close();
  }
}

/** EXPLAIN QUERY PLAN of the statements a list request runs, to explain a latency figure. */
export function queryPlans(dbFile: string, tableId: string, fields: FieldMeta[], q: { filter?: unknown; sort?: unknown }, pageSize: number) {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const s = listSql(tableId, fields, q);
    const plan = (sql: string, params: unknown[]) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    return { page: plan(s.pageSql, [...s.params, pageSize, 0]), count: plan(s.countSql, s.params), pageSql: s.pageSql, countSql: s.countSql };
  } finally {
    db.close();
  }
}
