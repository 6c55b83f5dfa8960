// SQLite: the answers kept for Idempotency-Key (src/domain/idempotency.ts) in a file of their own beside the database,
// written on a worker thread. Each answer is a row in a B-tree ordered by a key the client chose at random, so writing
// it dirties a page of its own, and committing that page cost the event loop some 40-60 µs per keyed write (issue 15,
// E2: most of what a key added). A second file has a write lock of its own, so the thread's commits never wait for the
// records' transactions nor hold them up; nothing is lost by the split, since an answer was never written in the
// transaction of its write (it is kept once the request has answered). Reads (rare: only keys the in-memory filters
// cannot rule out) stay on the calling thread.
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** The file in DATA_DIR, beside the database. */
export const ANSWER_FILE = 'idempotency-keys.db';

/** A kept answer as stored: `headers` is JSON text, `expiresAt` an ISO time. */
export interface AnswerRow {
  actor: string;
  key: string;
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
  expiresAt: string;
}

export interface AnswerFile {
  /**
   * Writes `rows` in one transaction on the thread, each unless a row of its actor and key is still live at `now` (an
   * answer given meanwhile by another process over this file is kept); `prune` first deletes the rows expired by `now`.
   */
  write(rows: AnswerRow[], now: string, prune: boolean): Promise<void>;
  /** The row of `actor` and `key`, expired or not, its headers parsed (as drizzle gives them from the database's table). */
  find(actor: string, key: string): (Omit<AnswerRow, 'headers'> & { headers: Record<string, string> }) | undefined;
  /** Up to `limit` rows live at `now`, by actor and key, after `after` (the filters are filled from these at start-up). */
  liveKeys(now: string, after: { actor: string; key: string } | undefined, limit: number): Array<{ actor: string; key: string; expiresAt: string }>;
  /** Waits for the write under way, then stops the thread and closes the file. */
  close(): Promise<void>;
}

// The same columns as `idempotency_keys` in the database (schema.ts), where PostgreSQL keeps the answers and where
// SQLite kept them before this file: `status` null is a claim, which SQLite holds in memory and never writes.
const SCHEMA = `CREATE TABLE IF NOT EXISTS idempotency_keys (actor text NOT NULL, key text NOT NULL, fingerprint text NOT NULL,
  status integer, headers text, body text, expires_at text NOT NULL, PRIMARY KEY (actor, key));
CREATE INDEX IF NOT EXISTS idempotency_expires ON idempotency_keys (expires_at);`;
const UPSERT = `INSERT INTO idempotency_keys (actor, key, fingerprint, status, headers, body, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (actor, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status, headers = excluded.headers,
  body = excluded.body, expires_at = excluded.expires_at WHERE idempotency_keys.expires_at <= ?`;

// Plain CommonJS run with `eval`, as the checkpointer's (the server is bundled into one file).
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
const upsert = db.prepare(workerData.upsert);
const prune = db.prepare('DELETE FROM idempotency_keys WHERE expires_at < ?');
const write = db.transaction((m) => {
  if (m.prune) prune.run(m.now);
  for (const r of m.rows) upsert.run(r.actor, r.key, r.fingerprint, r.status, r.headers, r.body, r.expiresAt, m.now);
});
parentPort.on('message', (m) => {
  if (m === 'stop') { db.close(); parentPort.close(); return; }
  let failed = null;
  try { write(m); } catch (e) { failed = String(e && e.message || e); }
  parentPort.postMessage(failed);
});
`;

/**
 * Opens (creating it) the answer file beside `databaseFile`, and moves into it the answers that an earlier version kept
 * in the database's own `idempotency_keys` (`moveFrom`: the database's write connection, at start-up, before any
 * request), so an upgrade forgets none.
 */
export function openAnswerFile(databaseFile: string, moveFrom: Database.Database): AnswerFile {
  const file = path.join(path.dirname(databaseFile), ANSWER_FILE);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec(SCHEMA);
  const old = moveFrom.prepare('SELECT actor, key, fingerprint, status, headers, body, expires_at AS expiresAt FROM idempotency_keys WHERE status IS NOT NULL').all() as AnswerRow[];
  if (old.length) {
    const now = new Date().toISOString();
    const upsert = db.prepare(UPSERT);
    db.transaction(() => {
      for (const r of old) upsert.run(r.actor, r.key, r.fingerprint, r.status, r.headers, r.body, r.expiresAt, now);
    })();
    moveFrom.exec('DELETE FROM idempotency_keys');
  }
  const findRow = db.prepare('SELECT actor, key, fingerprint, status, headers, body, expires_at AS expiresAt FROM idempotency_keys WHERE actor = ? AND key = ?');
  const firstKeys = db.prepare('SELECT actor, key, expires_at AS expiresAt FROM idempotency_keys WHERE expires_at > ? ORDER BY actor, key LIMIT ?');
  const laterKeys = db.prepare(`SELECT actor, key, expires_at AS expiresAt FROM idempotency_keys WHERE expires_at > ? AND (actor > ? OR (actor = ? AND key > ?))
    ORDER BY actor, key LIMIT ?`);

  // Started at the first write: most stores (a test's, a tool's) never keep an answer.
  let worker: Worker | undefined;
  /** The writes posted and not yet answered, in order (the thread answers in the order it is asked). */
  const waiting: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  let exited: Promise<void> = Promise.resolve();
  const thread = (): Worker => {
    if (worker) return worker;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(THREAD, { eval: true, workerData: { file, driver, upsert: UPSERT } });
    w.unref();
    w.on('message', (failed: string | null) => {
      const next = waiting.shift();
      if (!waiting.length) w.unref();
      if (failed) next?.reject(new Error(failed));
      else next?.resolve();
    });
    w.on('error', (e) => {
      for (const p of waiting.splice(0)) p.reject(e);
    });
    exited = new Promise((resolve) => w.once('exit', () => {
      if (worker === w) worker = undefined; // a thread that died is started again by the next write
      for (const p of waiting.splice(0)) p.reject(new Error('the thread writing the kept answers stopped'));
      resolve();
    }));
    return (worker = w);
  };

  return {
    write(rows, now, prune) {
      const w = thread();
      return new Promise<void>((resolve, reject) => {
        waiting.push({ resolve, reject });
        w.ref(); // a write under way keeps the process alive until it is done
        w.postMessage({ rows, now, prune });
      });
    },
    find(actor, key) {
      const row = findRow.get(actor, key) as AnswerRow | undefined;
      return row && { ...row, headers: JSON.parse(row.headers) as Record<string, string> };
    },
    liveKeys: (now, after, limit) =>
      (after ? laterKeys.all(now, after.actor, after.actor, after.key, limit) : firstKeys.all(now, limit)) as Array<{ actor: string; key: string; expiresAt: string }>,
    async close() {
      if (worker) {
        worker.ref();
        worker.postMessage('stop');
        await exited;
      }
      db.close();
    },
  };
}
