// Group commit on SQLite (src/db/sqlite-store.ts): while requests are in flight, the transactions ending in a turn share
// a COMMIT, each caller hears of its own only once that COMMIT is done, a failing one undoes only its own work, and
// some commit at once.
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../src/db/sqlite-store.js';
import { ENGINE } from './database.js';
import { scratchSqliteStores } from './scratch-store.js';

const stores = scratchSqliteStores('group-commit-');

/**
 * A store with a table of numbers, and a connection of another process's kind that sees only what was committed. A
 * request is in flight (app.fetch tells the store of each as it arrives and is answered), unless `idle`.
 */
async function setup(idle = false) {
  // Groups stay open up to a second here (2 ms in service), so that a slow moment of the machine cannot end one early.
  const { store, file } = stores.open({ groupCommitMs: 1000 });
  await store.transaction(async (tx) => void (await tx.db.run(sql`CREATE TABLE n (v INTEGER NOT NULL)`)));
  if (!idle) store.requestArrived();
  const other = new Database(file, { readonly: true });
  const committed = () => (other.prepare('SELECT v FROM n ORDER BY v').all() as Array<{ v: number }>).map((r) => r.v);
  return { store, file, committed, closeOther: () => other.close() };
}

const put = (store: SqliteStore, v: number, then?: () => void) => store.transaction(async (tx) => {
  await tx.db.run(sql`INSERT INTO n (v) VALUES (${v})`);
  then?.();
  return v;
});

describe.runIf(ENGINE === 'sqlite')('SQLite group commit', () => {
  it('transactions that end in one turn commit together, and each caller hears of its own only after that commit', async () => {
    const { store, committed, closeOther } = await setup();
    const seenBySecond: number[][] = [];
    const settledWith: number[][] = [];
    const first = put(store, 1).then((v) => void settledWith.push([v, ...committed()]));
    // The second runs while the first's work is done but not yet committed: nobody else sees it yet.
    const second = put(store, 2, () => seenBySecond.push(committed())).then((v) => void settledWith.push([v, ...committed()]));
    await Promise.all([first, second]);
    expect(seenBySecond).toEqual([[]]);
    // By the time either caller hears back, both are committed.
    expect(settledWith).toEqual([[1, 1, 2], [2, 1, 2]]);
    closeOther();
  });

  it('with no request in flight (a worker\'s claim loop), a transaction commits at once', async () => {
    const { store, committed, closeOther } = await setup(true);
    let seenBySecond: number[] = [];
    await Promise.all([put(store, 1), put(store, 2, () => (seenBySecond = committed()))]);
    expect(seenBySecond).toEqual([1]);
    // A request came and was answered: none is in flight again.
    store.requestArrived();
    store.requestFinished();
    await Promise.all([put(store, 3), put(store, 4, () => (seenBySecond = committed()))]);
    expect(seenBySecond).toEqual([1, 2, 3]);
    closeOther();
  });

  it('a group that has been open groupCommitMs commits when its next transaction ends', async () => {
    const { store, file } = stores.open({ groupCommitMs: 0 });
    await store.transaction(async (tx) => void (await tx.db.run(sql`CREATE TABLE n (v INTEGER NOT NULL)`)));
    store.requestArrived();
    const other = new Database(file, { readonly: true });
    let seenBySecond: unknown[] = [];
    await Promise.all([put(store, 1), put(store, 2, () => (seenBySecond = other.prepare('SELECT v FROM n').all()))]);
    expect(seenBySecond).toEqual([{ v: 1 }]);
    other.close();
  });

  it('a transaction that fails undoes only its own work; the others of its group commit', async () => {
    const { store, committed, closeOther } = await setup();
    const results = await Promise.allSettled([
      put(store, 1),
      store.transaction(async (tx) => {
        await tx.db.run(sql`INSERT INTO n (v) VALUES (2)`);
        throw new Error('refused');
      }),
      put(store, 3),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committed()).toEqual([1, 3]);
    // The same holds for the callbacks: only committed transactions' run.
    const ran: string[] = [];
    await Promise.allSettled([
      store.transaction(async (tx) => tx.afterCommit(() => ran.push('a'))),
      store.transaction(async (tx) => {
        tx.afterCommit(() => ran.push('b'));
        throw new Error('refused');
      }),
    ]);
    expect(ran).toEqual(['a']);
    closeOther();
  });

  it('a transaction announcing a change to what is kept in memory commits at once, before the next one runs', async () => {
    const { store, committed, closeOther } = await setup();
    let seenByNext: number[] = [];
    await Promise.all([
      store.transaction(async (tx) => {
        await tx.db.run(sql`INSERT INTO n (v) VALUES (1)`);
        tx.announce('schema');
      }),
      put(store, 2, () => (seenByNext = committed())),
    ]);
    expect(seenByNext).toEqual([1]);
    // A topic that only wakes workers up does not.
    seenByNext = [];
    await Promise.all([
      store.transaction(async (tx) => {
        await tx.db.run(sql`INSERT INTO n (v) VALUES (3)`);
        tx.announce('jobs');
      }),
      put(store, 4, () => (seenByNext = committed())),
    ]);
    expect(seenByNext).toEqual([1, 2]);
    closeOther();
  });

  it('a second store on the same file in this process writes while the first has a group open', async () => {
    const { store, file, committed, closeOther } = await setup();
    const second = openSqliteStore(file);
    try {
      let workDone!: () => void;
      const first = put(store, 1, () => workDone());
      await new Promise<void>((resolve) => (workDone = resolve));
      for (let i = 0; i < 10; i++) await null;
      // The first store's work is done and its commit waits for the turn to end.
      expect(store.sqlite.inTransaction).toBe(true);
      const started = Date.now();
      await put(second, 2);
      // Without committing the first store's open group, the second's BEGIN would wait out SQLite's busy timeout (5 s).
      expect(Date.now() - started).toBeLessThan(2000);
      await Promise.all([first, put(store, 3)]);
      expect(committed()).toEqual([1, 2, 3]);
    } finally {
      await second.close();
      closeOther();
    }
  });

  it('closing the store commits an open group first', async () => {
    const { store, file, closeOther } = await setup();
    closeOther();
    const pending = put(store, 7);
    await stores.close();
    await expect(pending).resolves.toBe(7);
    const reopened = new Database(file, { readonly: true });
    expect(reopened.prepare('SELECT v FROM n').all()).toEqual([{ v: 7 }]);
    reopened.close();
  });
});
