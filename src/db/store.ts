// The storage boundary the domain talks to: asynchronous, with a transaction as an async unit of work. SQLite implements
// it in sqlite-store.ts; a second engine implements the same interface (contract section 11).
import type { SQL } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { FieldDef } from '../fields/field-type.js';
import type * as schema from './schema.js';
import type { ConditionGroup, RowWrite, SortKey, StoredRow } from './record-store/types.js';
import type { EventRow } from './record-store/event-rows.js';
import type { AnswerFile } from './sqlite-answer-file.js';

export type { Condition, ConditionGroup, RowWrite, SortKey, StoredRow } from './record-store/types.js';
export type { EventRow } from './record-store/event-rows.js';

/** The service's own tables, as drizzle sees them. The domain takes them from `Store.schema`, never by import. */
export type Schema = typeof schema;

/**
 * The drizzle query builder over the service's own tables. The domain only ever `await`s a query (never the SQLite-only
 * `.all()`, `.get()`, `.run()`; `first()` stands for `.get()`), so the same code runs on every engine. A hot read may be
 * prepared once with `.prepare()` and run with `await q.execute(params)`; it then reads through the connection it was
 * prepared on, so prepare on the store for reads outside transactions only.
 */
export type Db = BetterSQLite3Database<Schema>;

/** What a piece of work reads and writes through: the store itself (outside a transaction) or a transaction. */
export interface UnitOfWork {
  readonly db: Db;
  readonly records: RecordStore;
  /** True inside `Store.transaction`: reads see the transaction's own uncommitted writes, caches must be bypassed. */
  readonly inTransaction: boolean;
  /**
   * Runs `callback` once the transaction has committed (at once outside a transaction): cache invalidation and
   * wake-ups, which must never act on a change that may still roll back. Nothing runs after a rollback.
   */
  afterCommit(callback: () => void): void;
  /**
   * Tells the other processes serving this database, once the transaction commits, that what `topic` names changed,
   * so they reload their copies (contract section 11: within 1 s). This process's own copies are kept current by the
   * code that made the change.
   */
  announce(topic: Topic): void;
  /**
   * The query `build` makes, prepared once per connection where the engine keeps connections (SQLite), or built now:
   * `build` must be one function kept by the caller (it is the cache key), making a drizzle `.prepare()`d query.
   */
  prepared<Q>(build: (db: Db) => Q): Q;
}

/** What the processes over one database keep copies of, and announce changes to. */
export type Topic = 'schema' | 'apps' | 'revocations' | 'workflows' | 'runs' | 'fills' | 'events' | 'webhooks' | 'deliveries' | 'jobs';
/**
 * The topics that name something this process keeps a copy of, refreshed when the change commits (the others only wake
 * workers up). On SQLite a transaction announcing one commits at once rather than with a group (sqlite-store.ts), so
 * that no transaction runs against a copy older than what it sees in the database.
 */
export const CACHED_TOPICS: ReadonlySet<Topic> = new Set(['schema', 'apps', 'revocations', 'workflows', 'webhooks']);

export interface TransactionOptions {
  /**
   * false: on PostgreSQL, run beside the write lock that serialises the domain's writes across processes, for work that
   * takes the row locks it needs itself and changes nothing the read cache keeps (the search index's background sync).
   * SQLite has one writer whatever this says.
   */
  writeLock?: boolean;
}

export interface Store extends UnitOfWork {
  readonly engine: 'sqlite' | 'postgres';
  readonly schema: Schema;
  /** ORDER BY term of the order rows of a log (audit, runs, tokens) were inserted in: SQLite's rowid, PostgreSQL's seq. */
  readonly insertionOrder: SQL;
  /**
   * Runs `work` as one transaction: committed when it resolves, rolled back when it throws. Writes happen only here
   * (outside, the store reads through a read-only connection). Inside, use the `tx` handed in, never the store:
   * the store would read outside the transaction, and a nested `transaction` call waits for this one to finish.
   */
  transaction<T>(work: (tx: UnitOfWork) => Promise<T>, opts?: TransactionOptions): Promise<T>;
  /**
   * SQLite: where the answers kept for Idempotency-Key live (a file of their own, written on a thread: sqlite-answer-file.ts).
   * PostgreSQL keeps them in `idempotency_keys`, where every process claims keys (src/domain/idempotency.ts).
   */
  readonly keptAnswers?: AnswerFile;
  /**
   * A secret the service keeps (the token signing key, the URL signing key): the one stored under `name`, or `create()`'s
   * value stored now. Processes starting at once over one database agree on one value.
   */
  secret(name: SecretName, create: () => Promise<string>): Promise<string>;
  /**
   * Takes the oldest queued workflow run and marks it running with a lease, in one step; undefined when none is queued.
   * Processes claim at once without waiting for each other (PostgreSQL: `FOR UPDATE SKIP LOCKED`), and never claim one
   * run twice.
   */
  claimQueuedRun(startedAt: string, leaseUntil: string): Promise<ClaimedRun | undefined>;
  /**
   * Takes up to `limit` webhook deliveries that are due (pending, next attempt at or before `now`, of an enabled webhook,
   * and held by no process: no lease or a lapsed one), oldest due first, and leases them until `leaseUntil`, in one step.
   * As with runs, processes claim at once and never the same delivery while its lease holds.
   */
  claimDueDeliveries(now: string, leaseUntil: string, limit: number): Promise<ClaimedDelivery[]>;
  /**
   * Takes the oldest queued job spooled into `spool` (a DATA_DIR's id: its file is there) and marks it running with a
   * lease, in one step, as `claimQueuedRun` does for runs: one process gets each job.
   */
  claimQueuedJob(startedAt: string, leaseUntil: string, spool: string): Promise<ClaimedJob | undefined>;
  /**
   * A reader for one long walk through a table (an export), closed when the walk ends. On SQLite it is a read-only
   * connection of its own with a small page cache, so a million-record scan neither grows the process by the shared
   * cache's 64 MiB nor evicts the pages that lists keep hot; PostgreSQL's cache is the server's, so there it is `records`.
   */
  openScan(): { records: RecordStore; close(): void };
  /** Runs `listener` whenever another process announces a change to `topic` (never on SQLite: one process serves it). */
  onAnnouncement(topic: Topic, listener: () => void): void;
  /** A number that changes whenever another process changes the schema (tables, fields): caches of it compare it. */
  externalVersion(): number;
  /**
   * A number that changes whenever a write commits: at once for this process's, and for another process's before the
   * next request that arrives after it (SQLite: any commit to the file; PostgreSQL: any write transaction, whose
   * write_version row moves with it). The database is asked at most once per turn of the event loop (a promise on
   * PostgreSQL, where asking is a round trip). `readCache` keeps what it read only while this stands still.
   */
  readVersion(): number | Promise<number>;
  /**
   * Called as each request arrives (app.fetch): the read version asked since then answers only for requests that arrived
   * before it was asked, so the next caller asks again. A question asked outside the poll phase of the event loop (by a
   * timer, say) would otherwise be shared with requests that arrive in the turn's poll phase, after it.
   */
  requestArrived(): void;
  /** Called as each request's answer is ready (app.fetch): SQLite groups commits while requests are in flight. */
  requestFinished(): void;
  /** Resolves when the database answers a trivial query (the health check). */
  ping(): Promise<void>;
  /** The database's size in bytes (metrics). */
  sizeBytes(): Promise<number>;
  close(): Promise<void>;
}

/**
 * User records, one SQL table per user table and one column per field. Every method is one step of the caller's unit of
 * work; the SQL that depends on a field's type comes from the type (src/fields/types/).
 */
export interface RecordStore {
  /** The record table of a new table of base `baseId` (in the base's own schema where the engine has schemas). */
  createTable(tableId: string, baseId: string): Promise<void>;
  dropTable(tableId: string, fields: FieldDef[]): Promise<void>;
  /** Drops what is left of a base's storage once its tables are dropped (its schema on PostgreSQL). */
  dropBase(baseId: string): Promise<void>;
  addField(tableId: string, field: FieldDef): Promise<void>;
  dropField(tableId: string, field: FieldDef): Promise<void>;
  /** Creates or drops the indexes of a field (filter and sort). */
  setIndexed(tableId: string, field: FieldDef, on: boolean): Promise<void>;
  /** Drops cached statement plans after a schema change that leaves statement texts as they were. */
  forgetStatements(): void;

  insert(tableId: string, fields: FieldDef[], rows: RowWrite[], at: string, by: string | null): Promise<void>;
  update(tableId: string, fields: FieldDef[], rows: RowWrite[], at: string, by: string | null): Promise<void>;
  /** Deletes records and every link to them; `linksIn` are the link fields of this table, `linksTo` those pointing at it. */
  delete(tableId: string, ids: string[], linksIn: FieldDef[], linksTo: FieldDef[]): Promise<void>;
  /** Writes one field's value for many records, without touching their modification time. */
  fillField(tableId: string, field: FieldDef, values: Array<{ id: string; stored: unknown }>): Promise<void>;

  /** Every record's raw value of one field, for a type change. */
  readField(tableId: string, field: FieldDef): Promise<Array<{ id: string; raw: unknown }>>;
  /** Which of `ids` exist in the table. */
  existing(tableId: string, ids: string[]): Promise<Set<string>>;
  getMany(tableId: string, fields: FieldDef[], ids: string[]): Promise<StoredRow[]>;
  /** One page in filter and sort order (ties in creation order); `count` gives the total of the same filter. */
  list(tableId: string, fields: FieldDef[], q: { where?: ConditionGroup; sort?: SortKey[]; limit: number; offset: number }): Promise<{ rows: StoredRow[] }>;
  /** Records whose search text holds every term (case-insensitive substrings), in creation order. */
  search(tableId: string, fields: FieldDef[], terms: string[], limit: number, offset: number): Promise<{ rows: StoredRow[]; total: number }>;
  /** Which of `ids` match a filter (workflow conditions use the same SQL as list filters). */
  matching(tableId: string, where: ConditionGroup, ids: string[]): Promise<Set<string>>;
  /** How many records match `where` (all of them without it). */
  count(tableId: string, where?: ConditionGroup): Promise<number>;
  /** How many records have `_seq` up to `seq`, and how many there are. */
  progress(tableId: string, seq: number): Promise<{ done: number; total: number }>;
  /** The records whose link field `link` holds any of `ids` (each once). */
  linkingTo(link: FieldDef, ids: string[]): Promise<string[]>;
  /** Up to `limit` record ids after `_seq` `afterSeq`, in `_seq` order: a walk through a whole table in slices. */
  idsAfter(tableId: string, afterSeq: number, limit: number): Promise<Array<{ seq: number; id: string }>>;

  /** Forgets the search index of a table after its searchable fields changed; it is rebuilt in the background. */
  resetSearch(tableId: string): Promise<void>;
  /** Brings the search index of a table up to date, at most `limit` rows at a time; true when rows are left. */
  syncSearch(tableId: string, fields: FieldDef[], limit?: number): Promise<boolean>;

  /** The highest `seq` of a base's events, 0 when it has none (the event log appends after it). */
  lastEventSeq(baseId: string): Promise<number>;
  /** Appends rows to the event log (every write does, so in plain SQL like the records). */
  insertEvents(rows: EventRow[]): Promise<void>;
}

export type SecretName = 'signing-key' | 'url-signing-key';

/** A workflow run as its claim hands it to the runner. */
export interface ClaimedRun {
  id: string;
  workflowId: string;
  tableId: string;
  recordId: string | null;
  depth: number;
}

/** A webhook delivery as its claim hands it to the delivery worker. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  /** The JSON body to send, as queued. */
  payload: string;
  /** Attempts made before this one. */
  attempts: number;
}

/** A job as its claim hands it to the job runner. */
export interface ClaimedJob {
  id: string;
  type: 'import' | 'export';
  baseId: string;
  tableId: string | null;
  createdBy: string;
  input: Record<string, unknown>;
}

/**
 * `reload` as an announcement listener: one run at a time, and one more after it when announcements arrived meanwhile,
 * so a burst of announcements costs two reloads and the last one sees every change. A failure is logged, not thrown.
 */
export function coalesced(what: string, reload: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    reload().catch((e) => console.error(`reloading ${what} after another process's change failed:`, e)).finally(() => {
      running = false;
      if (again) {
        again = false;
        run();
      }
    });
  };
  return run;
}

/** The first row of a query's answer, or undefined: the engine-neutral spelling of SQLite's `.get()`. */
export async function first<T>(rows: PromiseLike<T[]>): Promise<T | undefined> {
  return (await rows)[0];
}

/**
 * Group commit: `write` puts the items given during one turn of the event loop into one transaction, and each caller's
 * promise settles when that transaction has committed (or failed). Items given while one is being written wait for the
 * next. For small rows that must be durable before the answer (issued tokens): many concurrent requests share a commit.
 * On SQLite the store itself also lets transactions of one turn share a COMMIT (sqlite-store.ts); this batching still
 * saves them a transaction each there, and on PostgreSQL it is the only sharing (a transaction per token would cost a
 * round trip and a flush to disk of its own).
 */
export function groupCommit<T>(store: Pick<Store, 'transaction'>, write: (tx: UnitOfWork, items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let queued: Array<{ item: T; done: (error?: unknown) => void }> = [];
  let writing = false;
  const flush = async () => {
    writing = true;
    while (queued.length) {
      const batch = queued;
      queued = [];
      try {
        await store.transaction((tx) => write(tx, batch.map((q) => q.item)));
        for (const q of batch) q.done();
      } catch (e) {
        for (const q of batch) q.done(e);
      }
    }
    writing = false;
  };
  return (item) => new Promise<void>((resolve, reject) => {
    queued.push({ item, done: (e) => (e === undefined ? resolve() : reject(e)) });
    if (!writing && queued.length === 1) setImmediate(() => void (writing || flush()));
  });
}
