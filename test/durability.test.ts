// Crash durability: the real server is SIGKILLed while batches are being written; every acknowledged batch survives the restart, whole.
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DB_FILE } from '../src/db/sqlite-store.js';
import { recordTable } from '../src/db/sqlite-record-store.js';
import { databaseEnvFor, ENGINE } from './database.js';
import { client, listAllRecords, login, removeDir, startBatchWriter, startServer, stopAllServers, tempDir, type BatchWriter } from './server-process.js';

const BATCH = 100;
let dataDir: string | undefined;
let writer: BatchWriter | undefined;

afterAll(async () => {
  await writer?.stop();
  await stopAllServers();
  removeDir(dataDir);
});

describe('durability', () => {
  it('keeps every acknowledged batch, and no partial batch, after a SIGKILL in the middle of writes', async () => {
    dataDir = tempDir('ts-durability-');
    const first = await startServer({ dataDir });
    const c1 = client(first.url, await login(first.url));
    const table = await c1.data('POST', '/api/v1/tables', {
      name: 'Crash',
      fields: [{ name: 'N', type: 'number' }, { name: 'S', type: 'text' }],
    }, 201);
    const tableId: string = table.id;

    writer = startBatchWriter(c1, tableId, { concurrency: 3, batchSize: BATCH });
    await writer.waitForAcked(BATCH); // the writes are under way
    await new Promise((r) => setTimeout(r, 1500));
    const killed = await first.kill('SIGKILL');
    await writer.stop();
    expect(killed.signal).toBe('SIGKILL');
    expect(writer.errors, 'answers other than 200 before the kill').toEqual([]);
    // Each loop always has a request out, so the kill cuts some of them off.
    expect(writer.connectionErrors.length).toBeGreaterThan(0);
    const acked = writer.acked;
    expect(writer.batches()).toBeGreaterThanOrEqual(3);
    expect(acked.size).toBe(writer.batches() * BATCH);

    // Restart on the same data directory (and database): SQLite recovers from the WAL the killed process left behind,
    // PostgreSQL never saw the killed process's uncommitted transactions commit.
    const second = await startServer({ dataDir });
    const c2 = client(second.url, await login(second.url));
    const records = await listAllRecords(c2, tableId);
    const found = new Map(records.map((r) => [r.id, r.fields]));
    expect(found.size).toBe(records.length);
    const missing = [...acked.keys()].filter((id) => !found.has(id));
    expect(missing, `${missing.length} of ${acked.size} acknowledged records are missing`).toEqual([]);
    for (const [id, fields] of acked) expect(found.get(id), id).toEqual(fields);
    // Batches in flight at the kill either committed whole or not at all.
    expect(records.length % BATCH, `record count ${records.length} is not a multiple of ${BATCH}`).toBe(0);
    expect(records.length).toBeGreaterThanOrEqual(acked.size);
    const byBatch = new Map<string, number>();
    for (const r of records) {
      const batch = String(r.fields.S).replace(/-r\d+$/, '');
      byBatch.set(batch, (byBatch.get(batch) ?? 0) + 1);
    }
    for (const [batch, n] of byBatch) expect(n, `records of batch ${batch}`).toBe(BATCH);

    // The restarted server takes writes again.
    const after = await c2.data('POST', `/api/v1/tables/${tableId}/records/batch`, { action: 'create', records: [{ fields: { N: -1, S: 'after' } }] }, 200);
    expect(after.items).toHaveLength(1);
    await second.stop();
    expect(second.process.exitCode).toBe(0);

    // The database is sound, and holds what the API showed.
    if (ENGINE === 'sqlite') {
      const db = new Database(path.join(dataDir, DB_FILE), { readonly: true, fileMustExist: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(db.prepare(`SELECT COUNT(*) FROM ${recordTable(tableId)}`).pluck().get()).toBe(records.length + 1);
      } finally {
        db.close();
      }
    } else {
      const db = new pg.Client({ connectionString: (await databaseEnvFor(dataDir)).DATABASE_URL });
      await db.connect();
      try {
        const { rows } = await db.query('SELECT base_id FROM tables WHERE id = $1', [tableId]);
        const counted = await db.query(`SELECT count(*)::int AS n FROM "b_${rows[0].base_id}"."rt_${tableId}"`);
        expect(counted.rows[0].n).toBe(records.length + 1);
      } finally {
        await db.end();
      }
    }
  });
});
