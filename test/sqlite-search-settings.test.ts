// SQLite search tables merge their segments with the settings sqlite-dialect.ts gives them (searchTableSettings): a new
// table gets them when it is created, a table from before them when its database is next opened.
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/db/sqlite-store.js';
import { ENGINE } from './database.js';
import { scratchSqliteStores } from './scratch-store.js';

const stores = scratchSqliteStores('ts-search-settings-');

describe.runIf(ENGINE === 'sqlite')('SQLite search table settings', () => {
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
});
