// readCache: rows read by key are kept only while nothing commits, whoever commits; frozen; never kept across a race.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { sql, type SQL } from 'drizzle-orm';
import { readCache } from '../src/db/read-cache.js';
import type { UnitOfWork } from '../src/db/store.js';
import type { SqliteStore } from '../src/db/sqlite-store.js';
import { openPgStore } from '../src/db/pg-store.js';
import { dropDatabase, ENGINE, freshDatabaseUrl } from './database.js';
import { scratchSqliteStores } from './scratch-store.js';

const stores = scratchSqliteStores('ts-read-cache-');
let store: SqliteStore | undefined;

function open() {
  const opened = stores.open();
  store = opened.store;
  const s = store;
  s.sqlite.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('a', 'one')");
  let reads = 0;
  const get = readCache(s, async (k) => {
    reads++;
    return s.sqlite.prepare('SELECT k, v FROM kv WHERE k = ?').get(k) as { k: string; v: string } | undefined;
  });
  return { file: opened.file, get, reads: () => reads };
}

describe.runIf(ENGINE === 'sqlite')('readCache', () => {
  it('answers from memory while nothing commits, and reads again after this process commits', async () => {
    const { get, reads } = open();
    expect((await get('a'))?.v).toBe('one');
    expect((await get('a'))?.v).toBe('one');
    expect(await get('missing')).toBeUndefined();
    expect(await get('missing')).toBeUndefined();
    expect(reads()).toBe(2);
    await store!.transaction(async () => void store!.sqlite.prepare("UPDATE kv SET v = 'two' WHERE k = 'a'").run());
    expect((await get('a'))?.v).toBe('two');
    expect(reads()).toBe(3);
  });

  it('sees a commit by another connection to the file from the next turn of the event loop', async () => {
    const { file, get } = open();
    expect((await get('a'))?.v).toBe('one');
    const other = new Database(file);
    other.prepare("UPDATE kv SET v = 'elsewhere' WHERE k = 'a'").run();
    other.prepare("INSERT INTO kv VALUES ('b', 'new')").run();
    other.close();
    // A request arriving now is handled in a later turn: the store asks the database again then.
    await new Promise((resolve) => setImmediate(resolve));
    expect((await get('a'))?.v).toBe('elsewhere');
    expect((await get('b'))?.v).toBe('new');
  });

  it('asks again for a request that arrived after the question, even within the same turn', async () => {
    const { file, get } = open();
    expect((await get('a'))?.v).toBe('one');
    const other = new Database(file);
    other.prepare("UPDATE kv SET v = 'elsewhere' WHERE k = 'a'").run();
    other.close();
    // Still the turn of the question (asked by a timer, say): a request arriving now must not share its answer.
    store!.requestArrived();
    expect((await get('a'))?.v).toBe('elsewhere');
  });

  it('hands out frozen rows, so no caller can change what the next one gets', async () => {
    const { get } = open();
    const row = (await get('a'))!;
    expect(Object.isFrozen(row)).toBe(true);
    expect(() => { (row as { v: string }).v = 'changed'; }).toThrow(TypeError);
  });

  it('keeps nothing that a commit raced: a read during which something committed is read again next time', async () => {
    open();
    let reads = 0;
    const s = store!;
    const racy = readCache(s, async (k) => {
      reads++;
      const row = s.sqlite.prepare('SELECT v FROM kv WHERE k = ?').get(k) as { v: string };
      if (reads === 1) await s.transaction(async () => void s.sqlite.prepare("UPDATE kv SET v = 'during' WHERE k = 'a'").run());
      return row.v;
    });
    expect(await racy('a')).toBe('one');
    expect(await racy('a')).toBe('during');
    expect(await racy('a')).toBe('during');
    expect(reads).toBe(2);
  });

});

/** Runs SQL in a PostgreSQL transaction (the store's `Db` is typed for SQLite's drizzle). */
const exec = async (tx: UnitOfWork, text: string) => void (await (tx.db as unknown as { execute(q: SQL): Promise<unknown> }).execute(sql.raw(text)));

describe.runIf(ENGINE === 'postgres')('readCache on PostgreSQL', () => {
  it('answers from memory while no write transaction commits, and reads again after one by this process or another', async () => {
    const url = (await freshDatabaseUrl())!;
    const [here, elsewhere] = [await openPgStore(url), await openPgStore(url)];
    try {
      await here.pool.query("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('a', 'one')");
      let reads = 0;
      const get = readCache(here, async (k) => {
        reads++;
        return (await here.pool.query<{ v: string }>('SELECT v FROM kv WHERE k = $1', [k])).rows[0]?.v;
      });
      const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
      expect(await get('a')).toBe('one');
      await nextTurn();
      expect(await get('a')).toBe('one');
      // A write outside a transaction (a rate-limit charge here) touches nothing the cache keeps and leaves it standing.
      await elsewhere.pool.query("INSERT INTO rate_hits (key, at_ms, n) VALUES ('test', 1, 1)");
      await nextTurn();
      expect(await get('a')).toBe('one');
      expect(reads).toBe(1);
      // Another process's commit: seen by the first request that arrives after it, with no announcement needed.
      await elsewhere.transaction((tx) => exec(tx, "UPDATE kv SET v = 'elsewhere' WHERE k = 'a'"));
      await nextTurn();
      expect(await get('a')).toBe('elsewhere');
      // Within a turn callers share one question; a request that arrives after it (in the turn of a question a timer
      // asked, say) gets a question of its own.
      const asked = here.readVersion();
      expect(here.readVersion()).toBe(asked);
      here.requestArrived();
      expect(here.readVersion()).not.toBe(asked);
      await nextTurn();
      // This process's own commit: seen at once, in the same turn.
      await here.transaction((tx) => exec(tx, "UPDATE kv SET v = 'here' WHERE k = 'a'"));
      expect(await get('a')).toBe('here');
      await nextTurn();
      expect(await get('a')).toBe('here');
      expect(reads).toBe(3);
      expect(Object.isFrozen(await get('a'))).toBe(true);
    } finally {
      await here.close();
      await elsewhere.close();
      await dropDatabase(url);
    }
  });
});

describe('a list\'s total, kept while nothing commits', () => {
  it('follows every write, per filter, on both engines', async () => {
    const { makeApp } = await import('./helpers.js');
    const app = await makeApp({});
    try {
      const table = (await app.request('POST', '/api/v1/tables', { body: { name: 'Counts', fields: [{ name: 'N', type: 'number' }] } })).body.data.id;
      const total = async (filter?: unknown) => (await app.request('GET', `/api/v1/tables/${table}/records${filter ? `?filter=${encodeURIComponent(JSON.stringify(filter))}` : ''}`)).body.data.total;
      const big = { conjunction: 'and', conditions: [{ field: 'N', operator: 'gt', value: 5 }] };
      expect(await total()).toBe(0);
      const made = (await app.request('POST', `/api/v1/tables/${table}/records/batch`, { body: { action: 'create', records: [1, 6, 7].map((n) => ({ fields: { N: n } })) } })).body.data.items;
      expect([await total(), await total(big), await total(), await total(big)]).toEqual([3, 2, 3, 2]);
      expect((await app.request('PUT', `/api/v1/tables/${table}/records/${made[0].id}`, { body: { fields: { N: 9 } } })).status).toBe(200);
      expect([await total(), await total(big)]).toEqual([3, 3]);
      expect((await app.request('DELETE', `/api/v1/tables/${table}/records/${made[1].id}`)).status).toBe(200);
      expect([await total(), await total(big)]).toEqual([2, 2]);
    } finally {
      await app.close();
    }
  });
});
