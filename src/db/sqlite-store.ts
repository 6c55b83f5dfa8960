// The SQLite implementation of the store: one write connection that transactions take turns on, one read-only
// connection for everything outside them (WAL lets it read the last commit while a transaction is open).
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { projectPath } from '../project-root.js';
import * as schema from './schema.js';
import { openAnswerFile } from './sqlite-answer-file.js';
import { BACKSTOP_PAGES, startCheckpointer } from './sqlite-checkpointer.js';
import { column } from './record-store/context.js';
import { searchTableSettings, sqliteDialect } from './sqlite-dialect.js';
import { createSqliteRecordStore } from './sqlite-record-store.js';
import { CACHED_TOPICS, type Db, type SecretName, type Store, type UnitOfWork } from './store.js';

const MIGRATIONS = projectPath('src', 'db', 'migrations');
/** The database file in DATA_DIR. */
export const DB_FILE = 'table-service.db';
/** How long a transaction waits for the one before it; past this, something holds the write lock far too long. */
const LOCK_WAIT_MS = 5000;
/**
 * Group commit: while requests are in flight, the transactions that end within one turn of the event loop share one
 * COMMIT (see `transaction`), unless the group has been open this long when one ends: a caller never waits more than
 * about this for the others of its group.
 */
const GROUP_COMMIT_MS = 2;
/** Each open store's way to commit its open group of transactions (see openGroup): tests open two stores on one file. */
const openGroups = new Set<() => void>();
/** Secrets stay files beside the database, where installations before PostgreSQL support kept them (0600). */
const SECRET_FILES: Record<SecretName, string> = { 'signing-key': 'signing-key.json', 'url-signing-key': 'url-signing.key' };

/** The page cache of the connections that serve requests: list scans of large tables stay in memory. */
const CACHE_KIB = 65536;
/** The page cache of a scan's own connection: enough for SQLite's read-ahead, small next to the records it streams. */
const SCAN_CACHE_KIB = 2048;

function connect(file: string, opts: { readonly: boolean; synchronous: 'NORMAL' | 'FULL'; cacheKiB?: number }) {
  const sqlite = new Database(file, { readonly: opts.readonly });
  if (!opts.readonly) sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${opts.synchronous}`);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`cache_size = -${opts.cacheKiB ?? CACHE_KIB}`);
  // The store's own statements (with modes of their own) are compiled apart from the shared cache.
  return { sqlite, compile: cacheStatements(sqlite) };
}

/**
 * Makes the connection keep its compiled statements by their text: drizzle prepares a query every time it runs, and
 * compiling is most of a small query's cost. A cached statement is handed out in its default mode (drizzle switches
 * some to raw rows). Bounded, like the record store's own cache.
 */
function cacheStatements(sqlite: Database.Database): Database.Database['prepare'] {
  const compile = sqlite.prepare.bind(sqlite);
  const statements = new Map<string, Database.Statement>();
  sqlite.prepare = ((source: string) => {
    let statement = statements.get(source);
    if (!statement) {
      if (statements.size >= 2000) statements.clear();
      statement = compile(source);
      statements.set(source, statement);
    } else if (statement.reader) statement.raw(false);
    return statement;
  }) as typeof sqlite.prepare;
  return compile;
}

/** Hands the write connection to one transaction at a time, in arrival order. */
function createWriteLock() {
  let held = false;
  const waiting: Array<() => void> = [];
  return {
    /** Whether a transaction (or the checkpointer) holds it now. */
    held: () => held,
    async acquire(): Promise<void> {
      if (!held) {
        held = true;
        return;
      }
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(grant), 1);
          reject(new Error(`a transaction waited ${LOCK_WAIT_MS} ms for the write lock (is a transaction begun on the store inside another?)`));
        }, LOCK_WAIT_MS);
        const grant = () => {
          clearTimeout(timer);
          resolve();
        };
        waiting.push(grant);
      });
    },
    release() {
      const next = waiting.shift();
      if (next) next();
      else held = false;
    },
  };
}

/** Gives search tables created before searchTableSettings existed those settings (once: each keeps them in its _config). */
function settleSearchTables(sqlite: Database.Database) {
  const tables = sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'fts_*' AND sql LIKE 'CREATE VIRTUAL TABLE%'`).pluck().all() as string[];
  const unsettled = tables.filter((name) => !sqlite.prepare(`SELECT 1 FROM "${name}_config" WHERE k = 'crisismerge'`).get());
  sqlite.transaction(() => {
    for (const name of unsettled) for (const ddl of searchTableSettings(`"${name}"`)) sqlite.exec(ddl);
  })();
}

/**
 * Rebuilds the sort indexes built before SQLite's sorts said NULLS LAST (sqliteDialect.emptiesLast): they were on
 * ((col IS NULL), col, _seq), which today's ORDER BY does not use. The ascending one goes, the filter index serves that
 * sort now; the descending one is built as sortIndexTerms says.
 */
function settleSortIndexes(sqlite: Database.Database) {
  const old = sqlite.prepare(`SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND name GLOB 'ixs*' AND sql LIKE '%IS NULL), %'`).all() as Array<{ name: string; tbl_name: string }>;
  sqlite.transaction(() => {
    for (const { name, tbl_name: table } of old) {
      sqlite.exec(`DROP INDEX "${name}"`);
      const [, dir, fieldId] = /^ixs(asc|desc)_(.+)$/.exec(name)!;
      const col = column(fieldId);
      const terms = sqliteDialect.sortIndexTerms(sqliteDialect.emptiesLast(col, dir === 'desc' ? 'DESC' : 'ASC'), col);
      if (terms) sqlite.exec(`CREATE INDEX "${name}" ON "${table}" (${terms}, _seq)`);
    }
  })();
}

export type SqliteStore = Store & {
  /** The write connection, for what only SQLite has (backups, tests that inspect the file). */
  readonly sqlite: Database.Database;
};

export function openSqliteStore(databaseFile: string, opts: { synchronous?: 'NORMAL' | 'FULL'; groupCommitMs?: number } = {}): SqliteStore {
  const synchronous = opts.synchronous ?? 'NORMAL';
  const groupCommitMs = opts.groupCommitMs ?? GROUP_COMMIT_MS;
  const { sqlite: writer, compile } = connect(databaseFile, { readonly: false, synchronous });
  // A transaction after the first of a commit group runs in a savepoint, which keeps a copy of each page it changes:
  // in memory here, where SQLite would spill it to a temporary file past 64 KiB (a batch of 1,000 records wrote some
  // megabytes there; 100-record batches measured 30 % slower). Also keeps this connection's sorts in memory (an index
  // built on a large table); the read connection's, which serve lists, stay as they were.
  writer.pragma('temp_store = MEMORY');
  const writeDb = drizzle(writer, { schema });
  migrate(writeDb, { migrationsFolder: MIGRATIONS });
  settleSearchTables(writer);
  settleSortIndexes(writer);
  writer.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  const keptAnswers = openAnswerFile(databaseFile, writer);
  const { sqlite: reader, compile: compileOnReader } = connect(databaseFile, { readonly: true, synchronous });
  const readDb = drizzle(reader, { schema });

  const forgetAll = () => {
    writeRecords.forget();
    readRecords.forget();
  };
  const writeRecords = createSqliteRecordStore(writer, forgetAll);
  const readRecords = createSqliteRecordStore(reader, forgetAll);
  const lock = createWriteLock();
  // Prepared drizzle queries per connection, keyed by the function that builds them (UnitOfWork.prepared).
  const preparedOn = (db: Db) => {
    const cache = new Map<unknown, unknown>();
    return <Q>(build: (db: Db) => Q): Q => {
      let q = cache.get(build) as Q | undefined;
      if (q === undefined) cache.set(build, (q = build(db)));
      return q;
    };
  };
  const preparedForWrites = preparedOn(writeDb);
  const dataVersion = compile('PRAGMA data_version').pluck();
  // On the read connection, which never writes, every commit moves it: this process's and any other's.
  const readerDataVersion = compileOnReader('PRAGMA data_version').pluck();
  // readVersion(): moved by this process's commits at once, and by another's as seen from the read connection, which is
  // asked at most once per turn of the event loop (a request's lookups come together, and each asking costs a read
  // transaction) and again after each request's arrival (requestArrived): an answer is shared only by requests that
  // arrived before it was asked, so each still sees every commit made before it arrived.
  let readEpoch = 0;
  let lastDataVersion = -1;
  let askedThisTurn = false;
  const nextTurn = () => {
    askedThisTurn = false;
  };
  function readVersion(): number {
    if (!askedThisTurn) {
      askedThisTurn = true;
      setImmediate(nextTurn);
      const version = readerDataVersion.get() as number;
      if (version !== lastDataVersion) {
        lastDataVersion = version;
        readEpoch++;
      }
    }
    return readEpoch;
  }
  const runs = schema.workflowRuns;
  // Prepared once (UnitOfWork.prepared): every workflow run begins with it, and drizzle would build it anew each time.
  const claimRun = (db: Db) => db.update(runs)
    .set({ status: 'running', startedAt: sql`${sql.placeholder('startedAt')}`, leaseUntil: sql`${sql.placeholder('leaseUntil')}` })
    .where(eq(runs.id, sql`(SELECT id FROM workflow_runs WHERE status = 'queued' ORDER BY rowid LIMIT 1)`))
    .returning({ id: runs.id, workflowId: runs.workflowId, tableId: runs.tableId, recordId: runs.recordId, depth: runs.depth }).prepare();
  const begin = compile('BEGIN IMMEDIATE');
  const commit = compile('COMMIT');
  const rollback = compile('ROLLBACK');
  const savepoint = compile('SAVEPOINT member');
  const releaseSavepoint = compile('RELEASE member');
  const rollbackToSavepoint = compile('ROLLBACK TO member');

  // Group commit. A commit is most of a small write's cost in SQLite (each one writes the last page of every B-tree it
  // touched to the log again), and under load several requests are read from their sockets in one turn of the event
  // loop, each handled as far as it goes before the next. So a transaction that ends while a request is being answered
  // does not commit: the next runs on in the same BEGIN (in a savepoint, so that its rollback undoes only its own work),
  // and one COMMIT comes once the turn is over, for every transaction that ended meanwhile; each caller hears of its own
  // transaction only after that COMMIT, as before. A transaction commits at once (with any before it) when no request
  // is in flight (a worker's claim loop, which would otherwise wait a turn per step), when its group is GROUP_COMMIT_MS
  // old, and when it announced a change to something kept in memory (CACHED_TOPICS: the next must not read a copy older
  // than the database it sees). An open group also commits before anyone else takes the write lock (the checkpointer) or
  // another store in this process writes to the same file (tests open two).
  /** Requests being answered now (requestArrived, requestFinished). */
  let requestsInFlight = 0;
  type Member = { callbacks: Array<() => void>; settle: (error?: unknown) => void };
  type Group = { openedAt: number; members: Member[] };
  let group: Group | undefined;
  function commitGroup(g: Group) {
    if (group !== g) return;
    group = undefined;
    openGroups.delete(commitIfIdle);
    try {
      commit.run();
    } catch (e) {
      if (writer.inTransaction) rollback.run();
      for (const m of g.members) m.settle(e);
      return;
    }
    checkpointer.committed();
    readEpoch++;
    for (const m of g.members) {
      try {
        for (const callback of m.callbacks) callback();
        m.settle();
      } catch (e) {
        m.settle(e);
      }
    }
  }
  /** Another store of this process is about to write to the file: commit the open group unless a transaction runs. */
  function commitIfIdle() {
    if (group && !lock.held()) commitGroup(group);
  }
  function openGroup(): Group {
    for (const other of openGroups) if (other !== commitIfIdle) other();
    // IMMEDIATE takes the file's write lock at once, so another process's writer never deadlocks on a lock upgrade.
    begin.run();
    const g: Group = { openedAt: performance.now(), members: [] };
    group = g;
    openGroups.add(commitIfIdle);
    setImmediate(() => commitWhenFree(g));
    return g;
  }
  /** Commits `g` (unless that happened meanwhile) once no transaction runs: the transactions waiting before it join it. */
  function commitWhenFree(g: Group) {
    if (group !== g) return;
    lock.acquire().then(() => {
      try {
        commitGroup(g);
      } finally {
        lock.release();
      }
    }, () => commitWhenFree(g));
  }

  async function transaction<T>(work: (tx: UnitOfWork) => Promise<T>): Promise<T> {
    await lock.acquire();
    const callbacks: Array<() => void> = [];
    let alone = false;
    const tx: UnitOfWork = {
      db: writeDb, records: writeRecords.records, inTransaction: true, afterCommit: (callback) => void callbacks.push(callback),
      announce: (topic) => {
        if (CACHED_TOPICS.has(topic)) alone = true;
      },
      prepared: preparedForWrites,
    };
    try {
      const g = group ?? openGroup();
      // The first of a group needs no savepoint (its failure rolls back the whole, which holds nothing else), nor pays
      // for one (a copy of each page it changes).
      const inSavepoint = g.members.length > 0;
      if (inSavepoint) savepoint.run();
      let result: T;
      try {
        result = await work(tx);
        if (inSavepoint) releaseSavepoint.run();
      } catch (e) {
        if (inSavepoint && writer.inTransaction) {
          rollbackToSavepoint.run();
          releaseSavepoint.run();
        } else if (group === g) {
          // Rolled back whole: the first of the group, or SQLite rolled back itself (a full disk, an I/O error), taking the
          // group's other work with it.
          if (writer.inTransaction) rollback.run();
          group = undefined;
          openGroups.delete(commitIfIdle);
          for (const m of g.members) m.settle(new Error(`rolled back with another transaction of its commit: ${e instanceof Error ? e.message : String(e)}`));
        }
        throw e;
      }
      const committed = new Promise<T>((resolve, reject) => {
        g.members.push({ callbacks, settle: (error) => (error === undefined ? resolve(result) : reject(error)) });
      });
      if (alone || requestsInFlight === 0 || performance.now() - g.openedAt >= groupCommitMs) commitGroup(g);
      return committed;
    } finally {
      lock.release();
    }
  }
  /** The write lock as the checkpointer takes it: an open group commits first, so the log can start over. */
  const lockForCheckpoints = {
    acquire: async () => {
      await lock.acquire();
      if (group) commitGroup(group);
    },
    release: () => lock.release(),
  };
  const checkpointer = startCheckpointer(databaseFile, lockForCheckpoints, (message) => console.error(`checkpointing ${databaseFile} failed: ${message}`));

  return {
    engine: 'sqlite',
    schema,
    insertionOrder: sql`rowid`,
    sqlite: writer,
    db: readDb,
    records: readRecords.records,
    inTransaction: false,
    afterCommit: (callback) => callback(),
    // One process serves a SQLite file: there is no one to tell, and no one to hear from.
    announce: () => {},
    onAnnouncement: () => {},
    prepared: preparedOn(readDb),
    keptAnswers,
    transaction,
    claimQueuedRun(startedAt, leaseUntil) {
      // One statement in a write transaction: transactions take turns, so no two claims see the same queued run.
      return transaction(async (tx) => (await tx.prepared(claimRun).execute({ startedAt, leaseUntil }))[0]);
    },
    claimDueDeliveries(now, leaseUntil, limit) {
      const d = schema.webhookDeliveries;
      // Inside a write transaction, as claimQueuedRun: no two claims see the same due delivery unleased.
      return transaction(async (tx) => tx.db.update(d).set({ leaseUntil })
        .where(sql`${d.id} IN (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ${now} AND w.enabled = 1 AND (d.lease_until IS NULL OR d.lease_until < ${now})
          ORDER BY d.next_attempt_at LIMIT ${limit})`)
        .returning({ id: d.id, webhookId: d.webhookId, eventId: d.eventId, eventType: d.eventType, payload: d.payload, attempts: d.attempts }));
    },
    claimQueuedJob(startedAt, leaseUntil, spool) {
      const jobs = schema.jobs;
      return transaction(async (tx) => (await tx.db.update(jobs).set({ status: 'running', startedAt, leaseUntil })
        .where(eq(jobs.id, sql`(SELECT id FROM jobs WHERE status = 'queued' AND spool = ${spool} ORDER BY rowid LIMIT 1)`))
        .returning({ id: jobs.id, type: jobs.type, baseId: jobs.baseId, tableId: jobs.tableId, createdBy: jobs.createdBy, input: jobs.input }))[0]);
    },
    async secret(name, create) {
      const file = path.join(path.dirname(databaseFile), SECRET_FILES[name]);
      if (!fs.existsSync(file)) fs.writeFileSync(file, await create(), { mode: 0o600 });
      return fs.readFileSync(file, 'utf8');
    },
    openScan() {
      const { sqlite: scanner } = connect(databaseFile, { readonly: true, synchronous, cacheKiB: SCAN_CACHE_KIB });
      return { records: createSqliteRecordStore(scanner, forgetAll).records, close: () => scanner.close() };
    },
    // The write connection's version moves only when another connection commits: this process's own commits go
    // through it, and the read connection never writes.
    externalVersion: () => dataVersion.get() as number,
    readVersion,
    requestArrived() {
      nextTurn();
      requestsInFlight++;
    },
    requestFinished() {
      requestsInFlight--;
    },
    async ping() {
      writer.prepare('SELECT 1').get();
      reader.prepare('SELECT 1').get();
    },
    async sizeBytes() {
      return (reader.pragma('page_count', { simple: true }) as number) * (reader.pragma('page_size', { simple: true }) as number);
    },
    async close() {
      // An open group commits first (its callers are waiting for it).
      await lockForCheckpoints.acquire();
      lock.release();
      // The thread's connection goes first: the last connection to close checkpoints the log and removes it.
      await checkpointer.stop();
      await keptAnswers.close();
      reader.close();
      writer.close();
    },
  };
}
