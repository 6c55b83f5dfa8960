// Record reads: pages with filters and sorts, records by id, keyword search, filter matches, one field's values.
import type { FieldDef } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import { Params } from '../sql-client.js';
import { chunks, column, isLink, linkTable, recordTable, searchTable, type StoreContext } from './context.js';
import { compileGroup, sortExpr } from './query.js';
import { rowShape, storedRows, SYSTEM_COLUMNS } from './row-shape.js';
import type { ConditionGroup, SortKey, StoredRow } from './types.js';

export function recordReads({ client, dialect, scalar }: StoreContext) {
  const marks = (n: number) => new Params(dialect).bindAll(new Array(n).fill(null));

  /** ` WHERE ...` for a filter (binding its values into `params`), or nothing where it matches every record. */
  function whereSql(where: ConditionGroup | undefined, params: Params, prefix: string): string {
    const condition = where ? compileGroup(where, params, prefix) : '';
    return condition && condition !== dialect.true ? ` WHERE ${condition}` : '';
  }

  function selectList(fields: FieldDef[]): string {
    return [...SYSTEM_COLUMNS, ...rowShape(fields).columns.map((f) => `t.${column(f.id)}`)].join(', ');
  }

  async function toRows(fields: FieldDef[], raw: unknown[][], prefix: string): Promise<StoredRow[]> {
    const rows = storedRows(fields, raw);
    await loadLinks(fields, rows, prefix);
    return rows;
  }

  /** One query per link field for a whole page, never one per row. */
  async function loadLinks(fields: FieldDef[], rows: StoredRow[], prefix: string) {
    const links = fields.filter(isLink);
    if (!links.length || !rows.length) return;
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const f of links) {
      for (const r of rows) r.values[f.id] = [];
      for (const chunk of chunks(rows.map((r) => r.id))) {
        const found = await client.rows(`SELECT src, dst FROM ${linkTable(f.id, prefix)} WHERE src IN (${marks(chunk.length)}) ORDER BY src, pos`, chunk);
        for (const [src, dst] of found) (byId.get(src as string)!.values[f.id] as string[]).push(dst as string);
      }
    }
  }

  /** The records with these `_seq` values, in `_seq` order. */
  async function bySeq(tableId: string, fields: FieldDef[], seqs: unknown[], prefix: string): Promise<StoredRow[]> {
    if (!seqs.length) return [];
    const raw = await client.rows(`SELECT ${selectList(fields)} FROM ${recordTable(tableId, prefix)} t WHERE t._seq IN (${marks(seqs.length)}) ORDER BY t._seq`, seqs);
    return toRows(fields, raw, prefix);
  }

  return {
    /** Every record's raw value of one field, for a type change. */
    async readField(tableId: string, field: FieldDef): Promise<Array<{ id: string; raw: unknown }>> {
      const prefix = await client.tablePrefix(tableId);
      const type = typeOfField(field);
      if (type.storage === 'link') {
        const rows = await client.rows(`SELECT src, dst FROM ${linkTable(field.id, prefix)} ORDER BY src, pos`);
        const byId = new Map<string, string[]>();
        for (const [src, dst] of rows as [string, string][]) byId.set(src, [...(byId.get(src) ?? []), dst]);
        return [...byId].map(([id, raw]) => ({ id, raw }));
      }
      const expr = type.storage === 'system' ? type.systemColumn : column(field.id);
      return (await client.rows(`SELECT _id, ${expr} FROM ${recordTable(tableId, prefix)} WHERE ${expr} IS NOT NULL`))
        .map(([id, raw]) => ({ id: id as string, raw }));
    },

    /** Which of `ids` exist in the table. */
    async existing(tableId: string, ids: string[]): Promise<Set<string>> {
      const prefix = await client.tablePrefix(tableId);
      const found = new Set<string>();
      for (const chunk of chunks(ids)) {
        const rows = await client.rows(`SELECT _id FROM ${recordTable(tableId, prefix)} WHERE _id IN (${marks(chunk.length)})`, chunk);
        for (const [id] of rows) found.add(id as string);
      }
      return found;
    },

    async getMany(tableId: string, fields: FieldDef[], ids: string[]): Promise<StoredRow[]> {
      const prefix = await client.tablePrefix(tableId);
      if (!ids.length) return [];
      const out: StoredRow[] = [];
      const select = `SELECT ${selectList(fields)} FROM ${recordTable(tableId, prefix)} t WHERE`;
      // One statement whatever the count where ids can go as one array parameter: a round trip costs more than the rows.
      if (dialect.inArray) out.push(...(await toRows(fields, await client.rows(`${select} ${dialect.inArray('t._id', 1)}`, [ids]), prefix)));
      else {
        for (const chunk of chunks(ids)) out.push(...(await toRows(fields, await client.rows(`${select} t._id IN (${marks(chunk.length)})`, chunk), prefix)));
      }
      const order = new Map(ids.map((id, i) => [id, i]));
      return out.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    },

    /** One page in filter and sort order (ties in creation order). */
    async list(tableId: string, fields: FieldDef[], q: { where?: ConditionGroup; sort?: SortKey[]; limit: number; offset: number }) {
      const prefix = await client.tablePrefix(tableId);
      const rt = recordTable(tableId, prefix);
      const params = new Params(dialect);
      const where = whereSql(q.where, params, prefix);
      const order = [...(q.sort ?? []).map((k) => sortExpr(k, dialect)), 't._seq ASC'].join(', ');
      const page = `LIMIT ${params.bind(q.limit)} OFFSET ${params.bind(q.offset)}`;
      const raw = await client.rows(`SELECT ${selectList(fields)} FROM ${rt} t${where} ORDER BY ${order} ${page}`, params.values);
      return { rows: await toRows(fields, raw, prefix) };
    },

    /** Records whose search text holds every term (case-insensitive substrings), in creation order. */
    async search(tableId: string, fields: FieldDef[], terms: string[], limit: number, offset: number) {
      const prefix = await client.tablePrefix(tableId);
      const st = searchTable(tableId, prefix);
      const { key } = dialect.search;
      const params = new Params(dialect);
      const where = dialect.search.match(st, terms, params);
      const matchCount = params.values.length;
      const seqs = (await client.rows(`SELECT ${key} FROM ${st} WHERE ${where} ORDER BY ${key} LIMIT ${params.bind(limit)} OFFSET ${params.bind(offset)}`, params.values))
        .map((r) => r[0]);
      const total = (await scalar(`SELECT COUNT(*) FROM ${st} WHERE ${where}`, params.values.slice(0, matchCount))) as number;
      return { rows: await bySeq(tableId, fields, seqs, prefix), total };
    },

    /** Which of `ids` match a filter (workflow trigger conditions use the same SQL as list filters). */
    async matching(tableId: string, where: ConditionGroup, ids: string[]): Promise<Set<string>> {
      const prefix = await client.tablePrefix(tableId);
      const found = new Set<string>();
      for (const chunk of chunks(ids)) {
        const params = new Params(dialect);
        const idList = params.bindAll(chunk);
        const cond = compileGroup(where, params, prefix);
        const rows = await client.rows(`SELECT t._id FROM ${recordTable(tableId, prefix)} t WHERE t._id IN (${idList}) AND ${cond}`, params.values);
        for (const [id] of rows) found.add(id as string);
      }
      return found;
    },

    /** The records whose link field `link` holds any of `ids` (each once). */
    async linkingTo(link: FieldDef, ids: string[]): Promise<string[]> {
      const lt = linkTable(link.id, await client.tablePrefix(link.tableId));
      const found = new Set<string>();
      for (const chunk of chunks(ids)) {
        for (const [src] of await client.rows(`SELECT DISTINCT src FROM ${lt} WHERE dst IN (${marks(chunk.length)})`, chunk)) found.add(src as string);
      }
      return [...found];
    },

    /** Up to `limit` record ids after `_seq` `afterSeq`, in `_seq` order: a walk through a whole table in slices. */
    async idsAfter(tableId: string, afterSeq: number, limit: number): Promise<Array<{ seq: number; id: string }>> {
      const rt = recordTable(tableId, await client.tablePrefix(tableId));
      const rows = await client.rows(`SELECT _seq, _id FROM ${rt} WHERE _seq > ${dialect.placeholder(1)} ORDER BY _seq LIMIT ${dialect.placeholder(2)}`, [afterSeq, limit]);
      return rows.map(([seq, id]) => ({ seq: Number(seq), id: id as string }));
    },

    /** How many records have `_seq` up to `seq`, and how many there are. */
    async progress(tableId: string, seq: number): Promise<{ done: number; total: number }> {
      const rt = recordTable(tableId, await client.tablePrefix(tableId));
      const [[done, total]] = await client.rows(`SELECT COUNT(*) FILTER (WHERE _seq <= ${dialect.placeholder(1)}), COUNT(*) FROM ${rt}`, [seq]);
      return { done: Number(done), total: Number(total) };
    },

    async count(tableId: string, where?: ConditionGroup): Promise<number> {
      const prefix = await client.tablePrefix(tableId);
      const params = new Params(dialect);
      return (await scalar(`SELECT COUNT(*) FROM ${recordTable(tableId, prefix)} t${whereSql(where, params, prefix)}`, params.values)) as number;
    },
  };
}
