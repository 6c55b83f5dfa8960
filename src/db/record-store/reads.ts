// Record reads: pages with filters and sorts, records by id, keyword search, filter matches, one field's values.
import type { FieldDef } from '../../fields/field-type.js';
import { fieldType } from '../../fields/registry.js';
import { Params } from '../sqlite-dialect.js';
import { column, hasColumn, linkTable, recordTable, searchTable, type StoreContext } from './context.js';
import { compileGroup, sortExpr } from './query.js';
import type { ConditionGroup, SortKey, StoredRow } from './types.js';

export function recordReads({ sqlite, stmt, dialect }: StoreContext) {
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
    const links = fields.filter((f) => fieldType(f.type).storage === 'link');
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

  return {
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
      const params = new Params(dialect);
      const where = q.where ? compileGroup(q.where, params) : '';
      const whereSql = where && where !== dialect.true ? ` WHERE ${where}` : '';
      const whereCount = params.values.length;
      const order = [...(q.sort ?? []).map(sortExpr), 't._seq ASC'].join(', ');
      const page = `LIMIT ${params.bind(q.limit)} OFFSET ${params.bind(q.offset)}`;
      const raw = stmt(`SELECT ${selectList(fields)} FROM ${recordTable(tableId)} t${whereSql} ORDER BY ${order} ${page}`)
        .raw().all(params.values) as unknown[][];
      const total = q.withTotal
        ? (stmt(`SELECT COUNT(*) FROM ${recordTable(tableId)} t${whereSql}`).pluck().get(params.values.slice(0, whereCount)) as number)
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
        const params = new Params(dialect);
        const idList = params.bindAll(chunk);
        const cond = compileGroup(where, params);
        const rows = stmt(`SELECT t._id FROM ${recordTable(tableId)} t WHERE t._id IN (${idList}) AND ${cond}`)
          .pluck().all(params.values) as string[];
        for (const id of rows) found.add(id);
      }
      return found;
    },

    count(tableId: string): number {
      return stmt(`SELECT COUNT(*) FROM ${recordTable(tableId)}`).pluck().get() as number;
    },
  };
}
