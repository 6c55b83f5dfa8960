// SQLite stores on new files for tests of the store itself: each closed and its folder removed after its test.
import path from 'node:path';
import { afterEach } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../src/db/sqlite-store.js';
import { removeDir, tempDir } from './server-process.js';

/** Call at the top of a test file; `open()` in a test gives a store on a new file, closed after the test. */
export function scratchSqliteStores(prefix: string) {
  let current: { store: SqliteStore | undefined; dir: string } | undefined;
  afterEach(async () => {
    await current?.store?.close();
    removeDir(current?.dir);
    current = undefined;
  });
  return {
    open(opts?: Parameters<typeof openSqliteStore>[1]): { store: SqliteStore; file: string } {
      const dir = tempDir(prefix);
      const file = path.join(dir, 'db.sqlite');
      const store = openSqliteStore(file, opts);
      current = { store, dir };
      return { store, file };
    },
    /** Closes the test's store now (a test of closing itself). */
    async close() {
      await current?.store?.close();
      if (current) current.store = undefined;
    },
  };
}
