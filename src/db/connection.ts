// Opens the SQLite database (WAL, busy timeout, foreign keys) and applies the drizzle migrations.
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { projectPath } from '../project-root.js';
import * as schema from './schema.js';

const MIGRATIONS = projectPath('src', 'db', 'migrations');

export function openDatabase(file: string, opts: { synchronous?: 'NORMAL' | 'FULL' } = {}) {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${opts.synchronous ?? 'NORMAL'}`);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('cache_size = -65536'); // 64 MiB page cache: list scans of large tables stay in memory
  const orm = drizzle(sqlite, { schema });
  migrate(orm, { migrationsFolder: MIGRATIONS });
  return { sqlite, orm };
}

export type Orm = ReturnType<typeof openDatabase>['orm'];

/**
 * Runs `work` in a write transaction begun IMMEDIATE, so two writers never deadlock on a lock upgrade.
 * better-sqlite3 transactions are synchronous: `work` must not await.
 */
export function writeTransaction<T>(sqlite: Database.Database, work: () => T): T {
  return sqlite.transaction(work).immediate();
}
