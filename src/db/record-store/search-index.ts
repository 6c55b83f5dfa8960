// Keeping a table's keyword-search table up to date: the searched text, dirty marks, background sync, reset.
// Rows up to a watermark (`search_state.indexed_seq`) are indexed; changed ones are marked in `search_dirty`. New rows
// always come above the watermark, because record writes are serialised (one writer on SQLite, a write lock on
// PostgreSQL). On PostgreSQL the background sync runs without that write lock (a trigram index takes long to fill),
// so whatever changes a table's search text otherwise (an update of a searchable value, a delete, a reset) first locks
// the table's `search_state` row, which a sync holds until it commits: the two take turns. A create needs no turn: its
// rows are above anything a sync running beside it can see.
import type { FieldDef } from '../../fields/field-type.js';
import { typeOfField } from '../../fields/registry.js';
import { Params, type RecordDialect } from '../sql-client.js';
import { chunks, column, recordTable, searchTable, type StoreContext } from './context.js';

/**
 * The text a record is found by: its searchable values joined by newlines. Search terms hold no whitespace,
 * so a term never matches across two values.
 */
function searchTextExpr(fields: FieldDef[], d: RecordDialect): string {
  const parts: string[] = [];
  for (const f of fields) {
    const type = typeOfField(f);
    if (!type.searchable) continue;
    parts.push(`coalesce(${type.searchText ? type.searchText(column(f.id), d) : column(f.id)}, '')`);
  }
  return d.search.stored(parts.length ? parts.join(` || ${d.newline} || `) : `''`);
}

export function searchIndex({ client, dialect: d, scalar }: StoreContext) {
  const p = (n: number) => d.placeholder(n);
  const { key } = d.search;

  /** The table's watermark, its `search_state` row locked until the transaction ends (see the header). */
  const lockSearch = async (tableId: string) =>
    ((await scalar(`SELECT indexed_seq FROM search_state WHERE table_id = ${p(1)}${d.forUpdate}`, [tableId])) as number | undefined) ?? 0;
  /** Waits for a sync of the table running beside this transaction, and keeps the next from starting until it ends. */
  const takeTurnWithSync = async (tableId: string) => {
    if (d.forUpdate) await lockSearch(tableId);
  };

  return {
    takeTurnWithSync,

    /** Marks already-indexed records whose search text changed. */
    async markSearchDirty(tableId: string, ids: string[]) {
      if (!ids.length) return;
      await takeTurnWithSync(tableId);
      const rt = recordTable(tableId, await client.tablePrefix(tableId));
      for (const chunk of chunks(ids)) {
        const params = new Params(d);
        const table = params.bind(tableId);
        const idList = params.bindAll(chunk);
        const sql = d.insertOrIgnore('search_dirty', `(table_id, seq) SELECT ${table}, _seq FROM ${rt}
        WHERE _id IN (${idList}) AND _seq <= (SELECT indexed_seq FROM search_state WHERE table_id = ${params.bind(tableId)})`);
        await client.run(sql, params.values);
      }
    },

    /** Forgets the search index of a table after the set of searchable fields changed; it is rebuilt in the background. */
    async resetSearch(tableId: string) {
      await takeTurnWithSync(tableId);
      await client.exec(`DELETE FROM ${searchTable(tableId, await client.tablePrefix(tableId))}`);
      await client.run(`UPDATE search_state SET indexed_seq = 0 WHERE table_id = ${p(1)}`, [tableId]);
      await client.run(`DELETE FROM search_dirty WHERE table_id = ${p(1)}`, [tableId]);
    },

    /**
     * Brings the search index of a table up to date, at most `limit` rows at a time; true when rows are left.
     * Writes only mark what changed, so a batch of records costs no tokenizing on the request path.
     */
    async syncSearch(tableId: string, fields: FieldDef[], limit = 5000): Promise<boolean> {
      const prefix = await client.tablePrefix(tableId);
      const st = searchTable(tableId, prefix);
      const rt = recordTable(tableId, prefix);
      const text = searchTextExpr(fields, d);
      // The record table first, then the search_state row: a field change alters the table before it resets the search,
      // so a sync taking them the other way round could deadlock with it (PostgreSQL keeps a table's lock to the end).
      if (d.forUpdate) await client.rows(`SELECT 1 FROM ${rt} LIMIT 1`);
      const watermark = await lockSearch(tableId);
      const dirty = (await client.rows(`SELECT seq FROM search_dirty WHERE table_id = ${p(1)} ORDER BY seq LIMIT ${p(2)}`, [tableId, limit])).map((r) => r[0]);
      for (const chunk of chunks(dirty)) {
        const marks = new Params(d).bindAll(chunk);
        await client.run(`DELETE FROM ${st} WHERE ${key} IN (${marks})`, chunk);
        await client.run(`INSERT INTO ${st} (${key}, text) SELECT _seq, ${text} FROM ${rt} WHERE _seq IN (${marks})`, chunk);
        const params = new Params(d);
        await client.run(`DELETE FROM search_dirty WHERE table_id = ${params.bind(tableId)} AND seq IN (${params.bindAll(chunk)})`, params.values);
      }
      const top = (await scalar(`SELECT max(_seq) FROM (SELECT _seq FROM ${rt} WHERE _seq > ${p(1)} ORDER BY _seq LIMIT ${p(2)}) s`, [watermark, limit])) as number | null;
      if (top !== null) {
        await client.run(`INSERT INTO ${st} (${key}, text) SELECT _seq, ${text} FROM ${rt} WHERE _seq > ${p(1)} AND _seq <= ${p(2)}`, [watermark, top]);
        await client.run(d.insertOrReplace('search_state', ['table_id', 'indexed_seq'], ['table_id'], [p(1), p(2)]), [tableId, top]);
      }
      if (dirty.length === limit) return true;
      return top !== null && (await client.rows(`SELECT 1 FROM ${rt} WHERE _seq > ${p(1)} LIMIT 1`, [top])).length > 0;
    },
  };
}
