// The PostgreSQL implementation of the store (contract section 11): a connection pool for reads outside transactions,
// one pooled connection per transaction, and a LISTEN connection that hears other processes' commits.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { projectPath } from '../project-root.js';
import * as pgSchema from './pg-schema.js';
import { pgDialect } from './pg-dialect.js';
import { createPgRecordStore } from './pg-record-store.js';
import type { ClaimedJob, Db, Schema, Store, Topic, TransactionOptions, UnitOfWork } from './store.js';

const MIGRATIONS = projectPath('src', 'db', 'pg-migrations');
/** The channel on which every process announces its changes (store.ts `Topic`), and hears the others'. */
const CHANNEL = 'table_service_commits';
/**
 * Advisory lock keys. Migrations run under one, so processes starting at once migrate once. Every write transaction
 * takes the other: writes are serialised across all processes, as on SQLite, so the checks the domain makes before
 * it writes (unique names, a base's last owner, link targets) hold; reads never wait for it.
 */
const MIGRATION_LOCK = 7_310_001;
const WRITE_LOCK = 7_310_002;

export type PgStore = Store & { readonly pool: pg.Pool };

/** Opens the database at `url`, applies the migrations and starts listening for other processes' announcements. */
export async function openPgStore(url: string, opts: { poolSize?: number } = {}): Promise<PgStore> {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10 });
  // An idle connection that the server drops must not take the process down.
  pool.on('error', (e) => console.error('PostgreSQL pool connection failed:', e.message));
  await migrateOnce(pool);
  const schema = pgSchema as unknown as Schema;
  const db = drizzle(pool, { schema: pgSchema }) as unknown as Db;

  // Tables never move between bases: the schema of a table's base is looked up once and kept.
  const prefixes = new Map<string, string>();
  const prefixOf = (client: pg.Pool | pg.PoolClient) => async (tableId: string) => {
    let prefix = prefixes.get(tableId);
    if (prefix === undefined) {
      const { rows } = await client.query<{ base_id: string }>('SELECT base_id FROM tables WHERE id = $1', [tableId]);
      if (!rows.length) throw new Error(`no such table: ${tableId}`);
      prefix = `${pgDialect.baseSchema(rows[0].base_id)}.`;
      prefixes.set(tableId, prefix);
    }
    return prefix;
  };
  const records = createPgRecordStore(pool, prefixOf(pool));

  // An announcement is `<process token> <topic>,<topic>`: the token lets a process ignore its own.
  const processToken = randomUUID();
  let schemaVersion = 0;
  const listeners = new Map<Topic, Array<() => void>>();
  const listener = new pg.Client({ connectionString: url });
  listener.on('notification', (n) => {
    const [from, topics = ''] = (n.payload ?? '').split(' ');
    if (from === processToken) return;
    for (const topic of topics.split(',') as Topic[]) {
      if (topic === 'schema') schemaVersion++;
      for (const heard of listeners.get(topic) ?? []) heard();
    }
  });
  listener.on('error', (e) => console.error('PostgreSQL LISTEN connection failed:', e.message));
  await listener.connect();
  await listener.query(`LISTEN ${CHANNEL}`);

  // readVersion(): the row every write transaction increments as it commits (write_version), asked at most once per
  // turn of the event loop and again after each request's arrival (requestArrived), so an answer is shared only by
  // requests that arrived before it was asked. The increment commits with the transaction's changes, so a read that
  // saw the old number before and after it read cannot have missed a change. Writes outside transactions (rate limits,
  // queue claims) touch nothing the read cache keeps, and leave it standing.
  let asked: Promise<number> | undefined;
  const nextTurn = () => {
    asked = undefined;
  };
  function readVersion(): Promise<number> {
    if (!asked) {
      asked = pool.query<{ n: string }>('SELECT n FROM write_version').then(({ rows }) => Number(rows[0].n));
      setImmediate(nextTurn);
    }
    return asked;
  }

  async function transaction<T>(work: (tx: UnitOfWork) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    const writeLock = opts.writeLock ?? true;
    const client = await pool.connect();
    const committed: Array<() => void> = [];
    const topics = new Set<Topic>();
    const txDb = drizzle(client, { schema: pgSchema }) as unknown as Db;
    const tx: UnitOfWork = {
      db: txDb,
      records: createPgRecordStore(client, prefixOf(client)),
      inTransaction: true,
      afterCommit: (callback) => void committed.push(callback),
      announce: (topic) => void topics.add(topic),
      // A transaction's connection is borrowed for it alone: nothing to keep a prepared query on.
      prepared: (build) => build(txDb),
    };
    try {
      await client.query(writeLock ? `BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK})` : 'BEGIN');
      let result: T;
      try {
        result = await work(tx);
        // NOTIFY is transactional: the other processes hear of the change only if it commits (one round trip for all).
        const notify = topics.size ? `NOTIFY ${CHANNEL}, '${processToken} ${[...topics].join(',')}'; ` : '';
        // Work beside the write lock changes nothing the read cache keeps (TransactionOptions): it leaves the version.
        await client.query(`${notify}${writeLock ? 'UPDATE write_version SET n = n + 1; ' : ''}COMMIT`);
        // This turn's question may have been answered before the commit: whoever asks next asks again.
        nextTurn();
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        throw e;
      }
      for (const callback of committed) callback();
      return result;
    } finally {
      client.release();
    }
  }

  const cache = new Map<unknown, unknown>();
  const prepared = <Q>(build: (db: Db) => Q): Q => {
    let q = cache.get(build) as Q | undefined;
    if (q === undefined) cache.set(build, (q = build(db)));
    return q;
  };
  return {
    engine: 'postgres',
    schema,
    insertionOrder: sql`seq`,
    pool,
    db,
    records,
    inTransaction: false,
    afterCommit: (callback) => callback(),
    openScan: () => ({ records, close: () => {} }),
    // Outside a transaction nothing is written, so there is nothing to announce.
    prepared,
    // One pool serves reads and writes: there is no write connection whose cache would be warmer.
    announce: () => {},
    onAnnouncement(topic, heard) {
      listeners.set(topic, [...(listeners.get(topic) ?? []), heard]);
    },
    transaction,
    async claimQueuedRun(startedAt, leaseUntil) {
      // Outside the write lock: a claim touches only the queue, and SKIP LOCKED lets every process claim at once, each
      // passing over the rows another is claiming this instant.
      const { rows } = await pool.query<{ id: string; workflowId: string; tableId: string; recordId: string | null; depth: string }>(
        `UPDATE workflow_runs SET status = 'running', started_at = $1, lease_until = $2
         WHERE id = (SELECT id FROM workflow_runs WHERE status = 'queued' ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING id, workflow_id AS "workflowId", table_id AS "tableId", record_id AS "recordId", depth`, [startedAt, leaseUntil]);
      return rows[0] && { ...rows[0], depth: Number(rows[0].depth) };
    },
    async claimDueDeliveries(now, leaseUntil, limit) {
      // As claimQueuedRun: outside the write lock, SKIP LOCKED passing over the deliveries another process is claiming.
      // A delivery leased meanwhile by a committed claim is re-checked against the WHERE and left out.
      const { rows } = await pool.query<{ id: string; webhookId: string; eventId: string; eventType: string; payload: string; attempts: string }>(
        `UPDATE webhook_deliveries SET lease_until = $2
         WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
           WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND w.enabled AND (d.lease_until IS NULL OR d.lease_until < $1)
           ORDER BY d.next_attempt_at LIMIT $3 FOR UPDATE OF d SKIP LOCKED)
         RETURNING id, webhook_id AS "webhookId", event_id AS "eventId", event_type AS "eventType", payload, attempts`, [now, leaseUntil, limit]);
      return rows.map((r) => ({ ...r, attempts: Number(r.attempts) }));
    },
    async claimQueuedJob(startedAt, leaseUntil, spool) {
      const { rows } = await pool.query<ClaimedJob>(
        `UPDATE jobs SET status = 'running', started_at = $1, lease_until = $2
         WHERE id = (SELECT id FROM jobs WHERE status = 'queued' AND spool = $3 ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING id, type, base_id AS "baseId", table_id AS "tableId", created_by AS "createdBy", input`, [startedAt, leaseUntil, spool]);
      return rows[0];
    },
    async secret(name, create) {
      const read = async () => (await pool.query<{ value: string }>('SELECT value FROM service_keys WHERE name = $1', [name])).rows[0]?.value;
      const found = await read();
      if (found !== undefined) return found;
      // Several processes may start at once: the first insert wins and everyone reads the winner.
      await pool.query('INSERT INTO service_keys (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
        [name, await create(), new Date().toISOString()]);
      return (await read())!;
    },
    externalVersion: () => schemaVersion,
    readVersion,
    requestArrived: nextTurn,
    requestFinished: () => {},
    async ping() {
      await pool.query('SELECT 1');
    },
    async sizeBytes() {
      const { rows } = await pool.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n');
      return Number(rows[0].n);
    },
    async close() {
      await listener.end().catch(() => {});
      await pool.end();
    },
  };
}

async function migrateOnce(pool: pg.Pool) {
  const client = await pool.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS });
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
    }
  } finally {
    client.release();
  }
}
