// What opening a SQLite database brings up to date in user tables made by earlier versions: search tables' merge settings
// (searchTableSettings; a new table gets them when it is created) and sort indexes from before NULLS LAST.
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/db/sqlite-store.js';
import { ENGINE } from './database.js';
import { scratchSqliteStores } from './scratch-store.js';

const stores = scratchSqliteStores('ts-open-upgrades-');

describe.runIf(ENGINE === 'sqlite')('opening a SQLite database', () => {
  const settings = (s: { sqlite: import('better-sqlite3').Database }, table: string) =>
    Object.fromEntries((s.sqlite.prepare(`SELECT k, v FROM "${table}_config" WHERE k IN ('automerge', 'crisismerge')`).raw().all() as [string, number][]));

  it('gives a new search table its merge settings', async () => {
    const { store } = stores.open();
    await store.transaction((tx) => tx.records.createTable('tblNew', 'basA'));
    expect(settings(store, 'fts_tblNew')).toEqual({ automerge: 16, crisismerge: 64 });
  });

  it('gives a search table from before the settings existed its settings when the database is opened, and keeps its rows', async () => {
    const { store, file } = stores.open();
    store.sqlite.exec(`CREATE VIRTUAL TABLE "fts_tblOld" USING fts5(text, tokenize = 'trigram')`);
    store.sqlite.prepare(`INSERT INTO "fts_tblOld" (rowid, text) VALUES (1, 'meadowlark')`).run();
    expect(settings(store, 'fts_tblOld')).toEqual({});
    await stores.close();
    const reopened = openSqliteStore(file);
    try {
      expect(settings(reopened, 'fts_tblOld')).toEqual({ automerge: 16, crisismerge: 64 });
      expect(reopened.sqlite.prepare(`SELECT rowid FROM "fts_tblOld" WHERE "fts_tblOld" MATCH 'adowl'`).pluck().all()).toEqual([1]);
    } finally {
      await reopened.close();
    }
  });

  it('rebuilds sort indexes on ((col IS NULL), col, _seq): the ascending one goes, the descending one is on the column', async () => {
    const { store, file } = stores.open();
    await store.transaction((tx) => tx.records.createTable('tblOld', 'basA'));
    store.sqlite.exec(`ALTER TABLE "rt_tblOld" ADD COLUMN "c_fldT" TEXT;
      ALTER TABLE "rt_tblOld" ADD COLUMN "c_fldB" INTEGER;
      CREATE INDEX "ix_fldT" ON "rt_tblOld" ("c_fldT");
      CREATE INDEX "ixsasc_fldT" ON "rt_tblOld" (("c_fldT" IS NULL), "c_fldT" ASC, _seq);
      CREATE INDEX "ixsdesc_fldT" ON "rt_tblOld" (("c_fldT" IS NULL), "c_fldT" DESC, _seq);
      CREATE INDEX "ixsdesc_fldB" ON "rt_tblOld" (coalesce("c_fldB", 0) DESC, _seq);`);
    await stores.close();
    const reopened = openSqliteStore(file);
    try {
      const indexes = Object.fromEntries(reopened.sqlite.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rt_tblOld' AND sql IS NOT NULL`).raw().all() as [string, string][]);
      expect(Object.keys(indexes).sort()).toEqual(['ix_fldT', 'ixsdesc_fldB', 'ixsdesc_fldT']);
      expect(indexes.ixsdesc_fldT).toContain('("c_fldT" DESC, _seq)');
      expect(indexes.ixsdesc_fldB).toContain('(coalesce("c_fldB", 0) DESC, _seq)');
      const plan = (order: string) => (reopened.sqlite.prepare(`EXPLAIN QUERY PLAN SELECT * FROM "rt_tblOld" t ORDER BY ${order}, t._seq LIMIT 10`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
      expect(plan('t."c_fldT" DESC NULLS LAST')).toBe('SCAN t USING INDEX ixsdesc_fldT');
      expect(plan('t."c_fldT" ASC NULLS LAST')).toBe('SCAN t USING INDEX ix_fldT');
    } finally {
      await reopened.close();
    }
  });
});
