// The search index's background sync runs beside the write lock on PostgreSQL (record-store/search-index.ts): a write
// that changes indexed text takes turns with a sync of its table, so a search never misses the change; a create waits
// for nothing. SQLite has one writer, so there the two always take turns and this cannot be observed from outside.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE } from './database.js';
import { makeApp, makeTable, type TestClient } from './helpers.js';

describe.runIf(ENGINE === 'postgres')('search sync beside writes (PostgreSQL)', () => {
  let c: TestClient;
  let table: string;
  let held: pg.Client;
  beforeAll(async () => {
    c = await makeApp();
    table = await makeTable(c, [{ name: 'Title', type: 'text' }]);
    held = new pg.Client({ connectionString: c.databaseUrl });
    await held.connect();
  });
  afterAll(async () => {
    await held.end();
    await c.close();
  });

  const found = async (q: string) => (await c.app.services.records.searchRecords(table, { q })).items.map((r) => r.fields.Title);
  /** What a sync holds while it fills the index: the table's search_state row, locked until it commits. */
  const holdSync = async () => {
    await held.query('BEGIN');
    await held.query('SELECT indexed_seq FROM search_state WHERE table_id = $1 FOR UPDATE', [table]);
  };
  const settled = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), ms))]);

  it('lets a create through while a sync runs, and makes an update of indexed text wait for it, then finds it', async () => {
    const made = await c.request('POST', `/api/v1/tables/${table}/records`, { body: { fields: { Title: 'alpha one' } } });
    expect(made.status).toBe(201);
    expect(await found('alpha')).toEqual(['alpha one']);

    await holdSync();
    const created = c.request('POST', `/api/v1/tables/${table}/records`, { body: { fields: { Title: 'bravo two' } } });
    expect(await settled(created, 3000)).toBe(true);
    const updated = c.request('PUT', `/api/v1/tables/${table}/records/${made.body.data.id}`, { body: { fields: { Title: 'charlie three' } } });
    // The update waits for the sync: had it gone ahead, the sync could index the old text over it.
    expect(await settled(updated, 500)).toBe(false);
    await held.query('COMMIT');
    expect((await updated).status).toBe(200);
    expect(await found('charlie')).toEqual(['charlie three']);
    expect(await found('alpha')).toEqual([]);
    expect(await found('bravo')).toEqual(['bravo two']);

    // A delete takes its turn too: the record leaves the index with it.
    await holdSync();
    const deleted = c.request('DELETE', `/api/v1/tables/${table}/records/${made.body.data.id}`);
    expect(await settled(deleted, 500)).toBe(false);
    await held.query('COMMIT');
    expect((await deleted).status).toBe(200);
    expect(await found('charlie')).toEqual([]);
  });
});
