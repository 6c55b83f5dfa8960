// The event log (contract section 14): every change written with it, read by cursor, with the actor and only real changes.
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE } from './database.js';
import { makeApp, makeTable, type TestClient } from './helpers.js';

let c: TestClient;
beforeAll(async () => {
  c = await makeApp();
});
afterAll(() => c.close());

const ok = (res: { status: number; body: any }, status = 200) => {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
};
const eventsOf = async (baseId: string, query = '') => ok(await c.request('GET', `/api/v1/bases/${baseId}/events?limit=1000${query}`));

describe('the event log', () => {
  it('records record, field and table changes in order, with their data and actor, and nothing for a no-op', async () => {
    const user = await c.user('Evie');
    const baseId = user.defaultBaseId;
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }], { baseId, token: user.token });
    await c.request('POST', `/api/v1/tables/${t}/fields`, { token: user.token, body: { name: 'Twice', type: 'formula', config: { expression: '{N} * 2' } } });
    const r = ok(await c.request('POST', `/api/v1/tables/${t}/records`, { token: user.token, body: { fields: { Name: 'a', N: 1 } } }), 201);
    ok(await c.request('PUT', `/api/v1/tables/${t}/records/${r.id}`, { token: user.token, body: { fields: { N: 2 } } }));
    ok(await c.request('PUT', `/api/v1/tables/${t}/records/${r.id}`, { token: user.token, body: { fields: { N: 2 } } }));
    ok(await c.request('DELETE', `/api/v1/tables/${t}/records/${r.id}`, { token: user.token }));
    const page = await eventsOf(baseId);
    expect(page.next).toBeNull();
    // A new table's default grid view is created with it (contract section 13).
    expect(page.items.map((e: any) => e.type)).toEqual(['table.created', 'view.created', 'field.created', 'record.created', 'record.updated', 'record.deleted']);
    const seqs = page.items.map((e: any) => Number(e.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(page.items.every((e: any) => /^\d+$/.test(e.seq) && e.id.startsWith('evt') && e.base_id === baseId)).toBe(true);
    const [, view, , created, updated, deleted] = page.items;
    expect(view).toMatchObject({ table_id: t, actor: { type: 'user', id: user.id }, data: { view: { name: 'Grid view', type: 'grid' } } });
    expect(created).toMatchObject({ table_id: t, record_id: r.id, actor: { type: 'user', id: user.id }, data: { after: { Name: 'a', N: 1, Twice: 2 } } });
    expect(updated.data).toEqual({ changed_fields: ['N', 'Twice'], before: { N: 1, Twice: 2 }, after: { N: 2, Twice: 4 } });
    expect(deleted.data).toEqual({ before: { Name: 'a', N: 2, Twice: 4 } });
  });

  it('pages by cursor with next, filters by table and type, and checks limit and who may read', async () => {
    const user = await c.user('Pat');
    const baseId = user.defaultBaseId;
    const a = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId, token: user.token });
    const b = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId, token: user.token });
    for (let i = 0; i < 5; i++) ok(await c.request('POST', `/api/v1/tables/${i % 2 ? b : a}/records`, { token: user.token, body: { fields: { Name: `r${i}` } } }), 201);
    const seen: string[] = [];
    let after = '0';
    for (;;) {
      const page = ok(await c.request('GET', `/api/v1/bases/${baseId}/events?after=${after}&limit=2`, { token: user.token }));
      seen.push(...page.items.map((e: any) => e.seq));
      if (!page.next) break;
      after = page.next;
    }
    // 2 tables, their 2 default views, 5 records.
    expect(seen.length).toBe(9);
    expect(new Set(seen).size).toBe(9);
    const onlyA = await eventsOf(baseId, `&table_id=${a}&type=record.created`);
    expect(onlyA.items.map((e: any) => e.data.after.Name)).toEqual(['r0', 'r2', 'r4']);
    expect((await c.request('GET', `/api/v1/bases/${baseId}/events?limit=0`)).status).toBe(400);
    expect((await c.request('GET', `/api/v1/bases/${baseId}/events?limit=1001`)).status).toBe(400);
    const editor = await c.user('Ed');
    ok(await c.request('PUT', `/api/v1/bases/${baseId}/members/${editor.id}`, { token: user.token, body: { role: 'editor' } }));
    expect((await c.request('GET', `/api/v1/bases/${baseId}/events`, { token: editor.token })).status).toBe(403);
  });

  it('a batch write\'s events share rows, yet read one by one: cursors and limits inside a row, filters, history', async () => {
    const user = await c.user('Batty');
    const baseId = user.defaultBaseId;
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }], { baseId, token: user.token });
    const before = (await eventsOf(baseId)).items.length;
    // 250 creates (rows of 100, 100 and 50), then an update of all of them and one more update of a single record.
    const created = ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, {
      token: user.token, body: { action: 'create', records: Array.from({ length: 250 }, (_, i) => ({ fields: { Name: `r${i}`, N: i } })) },
    })).items as Array<{ id: string }>;
    ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, {
      token: user.token, body: { action: 'update', records: created.map((r, i) => ({ id: r.id, fields: { N: i + 1000 } })) },
    }));
    ok(await c.request('PUT', `/api/v1/tables/${t}/records/${created[150].id}`, { token: user.token, body: { fields: { Name: 'renamed' } } }));
    const all = (await eventsOf(baseId)).items.slice(before);
    expect(all.map((e: any) => e.type)).toEqual([...Array(250).fill('record.created'), ...Array(250).fill('record.updated'), 'record.updated']);
    expect(all.map((e: any) => e.record_id)).toEqual([...created.map((r) => r.id), ...created.map((r) => r.id), created[150].id]);
    expect(all.map((e: any) => e.data.after.N)).toEqual([...created.map((_, i) => i), ...created.map((_, i) => i + 1000), undefined]);
    const seqs = all.map((e: any) => Number(e.seq));
    expect(seqs).toEqual(seqs.map((_: number, i: number) => seqs[0] + i));
    expect(new Set(all.map((e: any) => e.id)).size).toBe(all.length);
    expect(all.every((e: any) => e.id.startsWith('evt') && e.table_id === t && e.actor.id === user.id)).toBe(true);
    // Stored as rows of up to 100 events per write: 3 + 3 for the batches, 1 for the single update.
    const { store } = c.app.services.deps;
    const { events } = store.schema;
    const rows = await store.db.select({ n: events.eventCount }).from(events).where(and(eq(events.tableId, t), like(events.type, 'record.%')));
    expect(rows.map((r) => Number(r.n)).sort((a, b) => a - b)).toEqual([1, 50, 50, 100, 100, 100, 100]);

    // Paging by 7 from a cursor in the middle of the first row walks every later event once, in order.
    const seen: string[] = [];
    for (let after = all[42].seq; after;) {
      const page = ok(await c.request('GET', `/api/v1/bases/${baseId}/events?after=${after}&limit=7`));
      seen.push(...page.items.map((e: any) => e.id));
      after = page.next;
    }
    expect(seen).toEqual(all.slice(43).map((e: any) => e.id));
    const updates = (await eventsOf(baseId, `&type=record.updated&after=${all[260].seq}`)).items;
    expect(updates.map((e: any) => e.seq)).toEqual(all.slice(261).map((e: any) => e.seq));
    const three = ok(await c.request('GET', `/api/v1/bases/${baseId}/events?table_id=${t}&limit=3&after=${all[98].seq}`));
    expect(three.items.map((e: any) => e.seq)).toEqual(all.slice(99, 102).map((e: any) => e.seq));
    expect(three.next).toBe(all[101].seq);

    // History finds a record's events in shared rows and in its own, newest first.
    const history = ok(await c.request('GET', `/api/v1/tables/${t}/records/${created[150].id}/history`, { token: user.token }));
    expect(history.map((h: any) => [h.type, h.changes])).toEqual([
      ['updated', { Name: { before: 'r150', after: 'renamed' } }],
      ['updated', { N: { before: 150, after: 1150 } }],
      ['created', { Name: { before: null, after: 'r150' }, N: { before: null, after: 150 } }],
    ]);
  });

  it('a computed change in another table is an update event of that record, with the writer as actor', async () => {
    const user = await c.user('Cora');
    const baseId = user.defaultBaseId;
    const people = await makeTable(c, [{ name: 'Rate', type: 'number' }], { baseId, token: user.token });
    const tasks = await makeTable(c, [{ name: 'Owner', type: 'link', config: { table_id: people } }], { baseId, token: user.token });
    ok(await c.request('POST', `/api/v1/tables/${tasks}/fields`, { token: user.token, body: { name: 'Rate', type: 'lookup', config: { link_field: 'Owner', field: 'Rate' } } }), 201);
    const p = ok(await c.request('POST', `/api/v1/tables/${people}/records`, { token: user.token, body: { fields: { Rate: 1 } } }), 201);
    const task = ok(await c.request('POST', `/api/v1/tables/${tasks}/records`, { token: user.token, body: { fields: { Owner: [p.id] } } }), 201);
    const { items: before } = await eventsOf(baseId);
    ok(await c.request('PUT', `/api/v1/tables/${people}/records/${p.id}`, { token: user.token, body: { fields: { Rate: 5 } } }));
    const { items } = await eventsOf(baseId, `&after=${before[before.length - 1].seq}`);
    expect(items.map((e: any) => [e.type, e.record_id])).toEqual([['record.updated', p.id], ['record.updated', task.id]]);
    expect(items[1]).toMatchObject({ actor: { type: 'user', id: user.id }, data: { changed_fields: ['Rate'], before: { Rate: [1] }, after: { Rate: [5] } } });

    // Deleting the linked record empties the task's link cell and its lookup: one update event for the task, with both.
    const other = await makeTable(c, [{ name: 'Person', type: 'link', config: { table_id: people } }], { baseId, token: user.token });
    const plain = ok(await c.request('POST', `/api/v1/tables/${other}/records`, { token: user.token, body: { fields: { Person: [p.id] } } }), 201);
    const { items: upTo } = await eventsOf(baseId);
    ok(await c.request('DELETE', `/api/v1/tables/${people}/records/${p.id}`, { token: user.token }));
    const { items: cascade } = await eventsOf(baseId, `&after=${upTo[upTo.length - 1].seq}`);
    expect(cascade.map((e: any) => [e.type, e.record_id]).sort()).toEqual([['record.deleted', p.id], ['record.updated', plain.id], ['record.updated', task.id]].sort());
    expect(cascade.find((e: any) => e.record_id === task.id)).toMatchObject({ data: { before: { Owner: [p.id], Rate: [5] }, after: { Owner: null, Rate: [] } } });
    expect(cascade.find((e: any) => e.record_id === plain.id)).toMatchObject({ data: { changed_fields: ['Person'], before: { Person: [p.id] }, after: { Person: null } } });
  });
});

describe('event seqs', () => {
  it('follow one another within a base: appends of one transaction continue each other, a rolled-back one leaves no seq behind, another process\'s appends are seen', async () => {
    const user = await c.user('Seq');
    const baseId = user.defaultBaseId;
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId, token: user.token });
    const { store } = c.app.services.deps;
    const { events } = c.app.services;
    const event = (name: string) => ({ type: 'record.created' as const, tableId: t, recordId: `rec_${name}`, data: { after: { Name: name } } });
    await store.transaction(async (tx) => {
      await events.append(tx, baseId, null, [event('a')]);
      await events.append(tx, baseId, null, [event('b'), event('c')]);
    });
    await expect(store.transaction(async (tx) => {
      await events.append(tx, baseId, null, [event('gone')]);
      throw new Error('rolled back');
    })).rejects.toThrow('rolled back');
    ok(await c.request('POST', `/api/v1/tables/${t}/records`, { token: user.token, body: { fields: { Name: 'd' } } }), 201);
    const names = ['a', 'b', 'c', 'd'];
    if (ENGINE === 'sqlite') {
      // Another process on the same file (a tool; SQLite is served by one) appends in between.
      const other = await makeApp({ DATA_DIR: c.dir, DATABASE_URL: '' });
      try {
        ok(await other.request('POST', `/api/v1/tables/${t}/records`, { token: user.token, body: { fields: { Name: 'e' } } }), 201);
      } finally {
        await other.close();
      }
      ok(await c.request('POST', `/api/v1/tables/${t}/records`, { token: user.token, body: { fields: { Name: 'f' } } }), 201);
      names.push('e', 'f');
    }
    const { items } = await eventsOf(baseId);
    const records = items.filter((e: any) => e.type === 'record.created');
    expect(records.map((e: any) => e.data.after.Name)).toEqual(names);
    const seqs = items.map((e: any) => Number(e.seq));
    expect(seqs).toEqual(seqs.map((_: number, i: number) => seqs[0] + i));
  });
});

describe('pruning the event log', () => {
  it('drops other events after EVENT_RETENTION_DAYS, record events (history) after HISTORY_RETENTION_DAYS, in every base', async () => {
    const app = await makeApp({ EVENT_RETENTION_DAYS: '30', HISTORY_RETENTION_DAYS: '365' });
    try {
      const users = [await app.user('Pruned A'), await app.user('Pruned B')];
      const tables: string[] = [];
      for (const u of users) tables.push(await makeTable(app, [{ name: 'Name', type: 'text' }], { baseId: u.defaultBaseId, token: u.token }));
      // More record events in one base than a prune chunk holds, so the walk takes several chunks.
      for (let i = 0; i < 5; i++) {
        const records = Array.from({ length: 500 }, (_, j) => ({ fields: { Name: `r${i}-${j}` } }));
        const res = await app.request('POST', `/api/v1/tables/${tables[0]}/records/batch`, { token: users[0].token, body: { action: 'create', records } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
      ok(await app.request('POST', `/api/v1/tables/${tables[1]}/records`, { token: users[1].token, body: { fields: { Name: 'b' } } }), 201);
      const count = async (baseId: string, type?: string) => {
        let n = 0;
        for (let after = '0'; ;) {
          const res = await app.request('GET', `/api/v1/bases/${baseId}/events?after=${after}&limit=1000${type ? `&type=${type}` : ''}`);
          expect(res.status).toBe(200);
          n += res.body.data.items.length;
          if (!res.body.data.next) return n;
          after = res.body.data.next;
        }
      };
      expect(await count(users[0].defaultBaseId, 'record.created')).toBe(2500);
      expect(await count(users[0].defaultBaseId)).toBeGreaterThan(2500);

      await app.app.services.events.prune(Date.now() + 29 * 86_400_000);
      expect(await count(users[0].defaultBaseId)).toBeGreaterThan(2500);
      await app.app.services.events.prune(Date.now() + 31 * 86_400_000);
      expect(await count(users[0].defaultBaseId)).toBe(2500);
      expect(await count(users[1].defaultBaseId)).toBe(1);
      await app.app.services.events.prune(Date.now() + 366 * 86_400_000);
      // Each base keeps its newest row, so the log goes on from where it was and cursors held by subscribers stay valid.
      // That row holds the last 100 events of the last batch (a batch's record events share rows of up to 100).
      const kept = ok(await app.request('GET', `/api/v1/bases/${users[0].defaultBaseId}/events?limit=1000`));
      expect(kept.items.map((e: any) => e.data.after?.Name)).toEqual(Array.from({ length: 100 }, (_, j) => `r4-${400 + j}`));
      const last = ok(await app.request('GET', `/api/v1/bases/${users[1].defaultBaseId}/events?limit=10`)).items;
      expect(last.map((e: any) => e.data.after?.Name)).toEqual(['b']);
      ok(await app.request('POST', `/api/v1/tables/${tables[1]}/records`, { token: users[1].token, body: { fields: { Name: 'c' } } }), 201);
      const next = ok(await app.request('GET', `/api/v1/bases/${users[1].defaultBaseId}/events?after=${last[0].seq}`));
      expect(next.items.map((e: any) => [e.type, e.data.after.Name])).toEqual([['record.created', 'c']]);
    } finally {
      await app.close();
    }
  });
});
