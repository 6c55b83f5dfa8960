// SQLite's write-ahead log is checkpointed by the store's thread, not inside commits, and stays bounded while writes go on.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BACKSTOP_PAGES } from '../src/db/sqlite-checkpointer.js';
import { ENGINE } from './database.js';
import { scratchSqliteStores } from './scratch-store.js';

const PAGE = 4096;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const stores = scratchSqliteStores('ts-checkpoints-');

/** A store on a new file with a table of blobs; `write(mb)` commits about `mb` MB in one transaction. */
function open() {
  const { store: s, file } = stores.open();
  s.sqlite.exec('CREATE TABLE blobs (b BLOB)');
  const insert = s.sqlite.prepare('INSERT INTO blobs VALUES (randomblob(?))');
  return {
    file,
    store: s,
    write: (mb: number) => s.transaction(async () => {
      for (let i = 0; i < mb * 256; i++) insert.run(PAGE - 100);
    }),
    size: (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0),
  };
}

describe.runIf(ENGINE === 'sqlite')('SQLite checkpoints', () => {
  it('copies committed pages into the database file on its own, well below the write connection\'s backstop', async () => {
    const { file, write, size } = open();
    const before = size(file);
    await write(8); // 2,048 pages: a fifth of the backstop, so the write connection never checkpoints
    expect(BACKSTOP_PAGES).toBeGreaterThan(2 * 2048);
    const deadline = Date.now() + 5000;
    while (size(file) - before < 7 * 1024 * 1024 && Date.now() < deadline) await pause(50);
    expect(size(file) - before).toBeGreaterThanOrEqual(7 * 1024 * 1024);
  });

  it('keeps the log bounded under continuous writes: it starts over instead of growing to the backstop', async () => {
    const { file, store, write, size } = open();
    // 30 commits of 2 MB (60 MB) with pauses shorter than a checkpoint's interval: without checkpoints the log would hold
    // them all, with only the backstop it would grow to 40 MB.
    for (let i = 0; i < 30; i++) {
      await write(2);
      await pause(20);
    }
    expect(size(`${file}-wal`)).toBeLessThan(16 * 1024 * 1024);
    const rows = store.sqlite.prepare('SELECT COUNT(*) FROM blobs').pluck().get();
    expect(rows).toBe(30 * 2 * 256);
  });

  it('closes cleanly: the thread ends and the log is removed', async () => {
    const { file, write, size } = open();
    await write(1);
    await stores.close();
    expect(size(`${file}-wal`)).toBe(0);
  });
});
