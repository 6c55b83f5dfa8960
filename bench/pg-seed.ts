// Seeding the PostgreSQL service's tables: through the batch endpoint, and for a big table the part beyond a limit
// written directly in SQL into the service's own record table (the same records the API would have got, in `_seq`
// order); then waiting until the service's background search indexer has caught up with every row.
import pg from 'pg';
import { record } from './data.js';
import { BATCH, log, seed } from './harness.js';
import { machineBusySeconds, treeMeter, type Stats, type Target } from './http-load.js';
import { baseSchema, insertColumns, pgInsertSql, pgTableMeta } from './pg-sql.js';
import { fmt } from './report.js';
import { columnFields, toStored } from './sql.js';
import { newId } from '../src/ids.js';


/**
 * Runs a seeding and sets the CPU the server, this process and PostgreSQL used meanwhile on its stats (in cores), as
 * load() does for a measured run, so the batch-create rows show where the time went.
 */
export async function metered<R extends { stats: Stats }>(t: Target, work: () => Promise<R>): Promise<R> {
  const server = t.serverCpu ? t.serverCpu() : t.pid ? treeMeter(t.pid)() : () => null;
  const db = t.dbCpu?.();
  const client0 = process.cpuUsage();
  const machine0 = machineBusySeconds();
  const r = await work();
  const s = r.stats;
  const cores = (x: number | null | undefined) => (x == null ? null : x / s.seconds);
  const client = process.cpuUsage(client0);
  s.serverCores = cores(server());
  s.clientCores = (client.user + client.system) / 1e6 / s.seconds;
  if (db) s.dbCores = cores(db());
  const machine1 = machineBusySeconds();
  if (machine0 !== null && machine1 !== null && s.serverCores !== null) {
    s.otherCores = Math.max(0, (machine1 - machine0) / s.seconds - s.serverCores - s.clientCores - (s.dbCores ?? 0));
  }
  return r;
}

export interface SeedResult {
  /** The part written through the API: its batch latencies and rate. */
  api: Awaited<ReturnType<typeof seed>>;
  apiRecords: number;
  /** Records written directly in SQL, and how long that took. */
  sqlRecords: number;
  sqlSeconds: number;
}

/**
 * Seeds `total` records: the first `apiLimit` (at least one batch) through the batch endpoint, the rest as multi-row
 * INSERTs into the record table, continuing the same PRNG so the table holds what an all-API seeding would (ids and
 * times aside). Rows written in SQL are unknown to the running service's search indexer: restart it afterwards (at
 * start it catches every table up), then waitSearchCaughtUp.
 */
export async function seedPg(svc: Target, db: pg.Pool, tableId: string, total: number, seedValue: number, apiLimit: number, label: string): Promise<SeedResult> {
  const apiRecords = Math.min(total, Math.max(BATCH, apiLimit));
  const api = await metered(svc, () => seed(svc, tableId, total, seedValue, label, '', apiRecords));
  const sqlRecords = total - apiRecords;
  if (!sqlRecords) return { api, apiRecords, sqlRecords, sqlSeconds: 0 };

  log(`  ${label}: writing the other ${sqlRecords.toLocaleString('en-US')} records directly in SQL into the service's record table…`);
  const started = performance.now();
  const { schema, fields } = await pgTableMeta(db, tableId);
  const table = `${schema}."rt_${tableId}"`;
  const by = ((await db.query(`SELECT _created_by FROM ${table} LIMIT 1`)).rows[0]?._created_by as string | null) ?? null;
  const byName = new Map(fields.map((f) => [f.name, f]));
  const cols = columnFields(fields);
  const width = insertColumns(fields).length;
  const r = api.prng;
  const client = await db.connect();
  let lastReport = started;
  try {
    // 1,000 rows a statement (15,000 parameters), 20 statements a transaction.
    for (let start = apiRecords; start < total; start += 20 * BATCH) {
      await client.query('BEGIN');
      for (let s = start; s < Math.min(total, start + 20 * BATCH); s += BATCH) {
        const n = Math.min(BATCH, total - s);
        const at = new Date().toISOString();
        const values: unknown[] = [];
        for (let i = 0; i < n; i++) {
          const rec = record(r, s + i, total);
          const row: unknown[] = new Array(width).fill(null);
          row[0] = newId('rec'); row[1] = at; row[2] = at; row[3] = by; row[4] = by;
          for (const [name, value] of Object.entries(rec)) {
            const f = byName.get(name)!;
            row[5 + cols.indexOf(f)] = toStored(f, value);
          }
          values.push(...row);
        }
        await client.query(pgInsertSql(table, fields, n), values);
      }
      await client.query('COMMIT');
      const done = Math.min(total, start + 20 * BATCH) - apiRecords;
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        log(`  ${label}: ${done.toLocaleString('en-US')} / ${sqlRecords.toLocaleString('en-US')} records in SQL, ${fmt(done / ((lastReport - started) / 1000))} records/s`);
      }
    }
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
  return { api, apiRecords, sqlRecords, sqlSeconds: (performance.now() - started) / 1000 };
}

/** How many rows of a table the search index has not caught up with (beyond its watermark, or marked dirty). */
export async function searchBehind(db: pg.Pool, tableId: string, baseId?: string): Promise<number> {
  const schema = baseId ? baseSchema(baseId) : (await pgTableMeta(db, tableId)).schema;
  const { rows } = await db.query<{ behind: string }>(`SELECT
    (SELECT count(*) FROM ${schema}."rt_${tableId}" WHERE _seq > coalesce((SELECT indexed_seq FROM search_state WHERE table_id = $1), 0))
    + (SELECT count(*) FROM search_dirty WHERE table_id = $1) AS behind`, [tableId]);
  return Number(rows[0].behind);
}

/** Waits until the service's search indexer has caught up with every row of the table; returns the seconds it took. */
export async function waitSearchCaughtUp(db: pg.Pool, tableId: string, label: string, maxSeconds = 3600): Promise<number> {
  const started = performance.now();
  const first = await searchBehind(db, tableId);
  let lastReport = started;
  for (let behind = first; behind > 0; behind = await searchBehind(db, tableId)) {
    const now = performance.now();
    if ((now - started) / 1000 > maxSeconds) throw new Error(`${label}: search index still ${behind} rows behind after ${maxSeconds} s`);
    if (now - lastReport > 15_000) {
      log(`  ${label}: search index ${behind.toLocaleString('en-US')} rows behind, ${fmt((first - behind) / ((now - started) / 1000))} rows/s`);
      lastReport = now;
    }
    await new Promise((res) => setTimeout(res, 500));
  }
  return (performance.now() - started) / 1000;
}
