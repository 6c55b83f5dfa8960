// Keeping a table's keyword-search index (FTS5) up to date: the searched text, dirty marks, background sync, reset.
import type { FieldDef, SqlDialect } from '../../fields/field-type.js';
import { fieldType } from '../../fields/registry.js';
import { column, recordTable, searchTable, type StoreContext } from './context.js';

/**
 * The text a record is found by: its searchable values joined by newlines. Search terms hold no whitespace,
 * so a term never matches across two values.
 */
function searchTextExpr(fields: FieldDef[], d: SqlDialect): string {
  const parts: string[] = [];
  for (const f of fields) {
    const type = fieldType(f.type);
    if (!type.searchable) continue;
    parts.push(`coalesce(${type.searchText ? type.searchText(column(f.id), d) : column(f.id)}, '')`);
  }
  return parts.length ? parts.join(` || ${d.newline} || `) : `''`;
}

export function searchIndex({ sqlite, stmt, dialect }: StoreContext) {
  return {
    /** Marks already-indexed records whose search text changed. */
    markSearchDirty(tableId: string, ids: string[]) {
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        stmt(`INSERT OR IGNORE INTO search_dirty (table_id, seq) SELECT ?, _seq FROM ${recordTable(tableId)}
        WHERE _id IN (${chunk.map(() => '?').join(',')}) AND _seq <= (SELECT indexed_seq FROM search_state WHERE table_id = ?)`).run(tableId, ...chunk, tableId);
      }
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
      const text = searchTextExpr(fields, dialect);
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
  };
}
