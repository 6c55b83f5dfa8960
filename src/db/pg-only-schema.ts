// The service's tables that only PostgreSQL has (no SQLite twin; test/schema-parity.test.ts lists them as exceptions),
// exported through pg-schema.ts.
import { pgTable, text, bigint, primaryKey } from 'drizzle-orm/pg-core';

/**
 * The service's keys (the token signing key pair, the URL-signing key), which on SQLite are files in DATA_DIR: with
 * DATABASE_URL the database is the only state, so several processes and a restore share the same keys.
 */
export const serviceKeys = pgTable('service_keys', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: text('created_at').notNull(),
});

// Rate limits and login failures, which on SQLite the one process keeps in memory, are shared here by every process
// serving the database (src/db/pg-limits.ts); rows past their window are swept. The rate_limit_charge function that
// reads and writes rate_hits is created by hand in migration 0001 (drizzle-kit does not manage functions).

/** Accepted requests per rate-limit key, for exact sliding windows: `n` requests at `at_ms` (ms since the epoch). */
export const rateHits = pgTable('rate_hits', {
  key: text('key').notNull(),
  atMs: bigint('at_ms', { mode: 'number' }).notNull(),
  n: bigint('n', { mode: 'number' }).notNull(),
}, (t) => [primaryKey({ columns: [t.key, t.atMs] })]);

/** Failed logins per throttle key (`email:...`, `address:...`): how many within the window and when the last was. */
export const loginFailures = pgTable('login_failures', {
  key: text('key').primaryKey(),
  count: bigint('count', { mode: 'number' }).notNull(),
  lastMs: bigint('last_ms', { mode: 'number' }).notNull(),
});

/**
 * One row whose `n` every write transaction (store.transaction) increments as it commits: the read cache keeps what it
 * read while `n` stands still (pg-store.ts readVersion). SQLite's twin is the file's own `PRAGMA data_version`.
 */
export const writeVersion = pgTable('write_version', {
  id: bigint('id', { mode: 'number' }).primaryKey(),
  n: bigint('n', { mode: 'number' }).notNull(),
});
