// The trash and record history (contract section 16): deleted records restore with ids, values, links both ways and
// computed values; permissions by role; a batch delete is one entry per record; history lists before/after per field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient } from './helpers.js';

let c: TestClient;
let baseId: string;
let people: string;
let tasks: string;
beforeAll(async () => {
  c = await makeApp();
  baseId = (await c.request('GET', '/api/v1/bases')).body.data.items[0].id;
  people = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Age', type: 'number' }], { baseId });
  tasks = await makeTable(c, [
    { name: 'Title', type: 'text' }, { name: 'Hours', type: 'number' }, { name: 'Owner', type: 'link', config: { table_id: people } },
  ], { baseId });
  ok(await c.request('POST', `/api/v1/tables/${tasks}/fields`, { body: { name: 'Double', type: 'formula', config: { expression: '{Hours} * 2' } } }), 201);
  ok(await c.request('POST', `/api/v1/tables/${tasks}/fields`, { body: { name: 'Owner name', type: 'lookup', config: { link_field: 'Owner', field: 'Name' } } }), 201);
});
afterAll(() => c.close());

const ok = <T = any>(res: { status: number; body: any }, status = 200): T => {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
};
const create = async (tableId: string, fields: Record<string, unknown>) => ok(await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields } }), 201);
const get = async (tableId: string, id: string, token?: string) => c.request('GET', `/api/v1/tables/${tableId}/records/${id}`, { token });
const trashList = async (token?: string) => ok<any[]>(await c.request('GET', `/api/v1/bases/${baseId}/trash`, { token }));

describe('trash', () => {
  it('restores a record with links (both directions) and computed values as they were', async () => {
    const ann = await create(people, { Name: 'Ann', Age: 40 });
    const bob = await create(people, { Name: 'Bob', Age: 30 });
    const t1 = await create(tasks, { Title: 'Paint', Hours: 3, Owner: [ann.id, bob.id] });
    const t2 = await create(tasks, { Title: 'Sand', Hours: 2, Owner: [ann.id] });
    const before = ok(await get(tasks, t1.id));
    expect(before.fields).toMatchObject({ Double: 6, 'Owner name': ['Ann', 'Bob'] });

    // Ann is linked to from two tasks: deleting her drops those links and her name from their lookups.
    expect(ok(await c.request('DELETE', `/api/v1/tables/${people}/records/${ann.id}`))).toEqual({ id: ann.id, deleted: true });
    expect(ok(await get(tasks, t1.id)).fields['Owner name']).toEqual(['Bob']);
    const list = await trashList();
    const entry = list.find((e) => e.name === 'Ann');
    expect(entry).toMatchObject({ type: 'record', table_id: people, deleted_by: expect.any(String) });
    expect(Date.parse(entry.deleted_at)).not.toBeNaN();

    expect(ok(await c.request('POST', `/api/v1/trash/${entry.id}/restore`))).toEqual({ id: entry.id, type: 'record', item_id: ann.id });
    const back = ok(await get(people, ann.id));
    expect(back.fields).toEqual({ Name: 'Ann', Age: 40 });
    expect(back.created_at).toBe(ann.created_at);
    expect(ok(await get(tasks, t1.id)).fields).toMatchObject({ Owner: expect.arrayContaining([ann.id, bob.id]), 'Owner name': expect.arrayContaining(['Ann', 'Bob']) });
    expect(ok(await get(tasks, t2.id)).fields).toMatchObject({ Owner: [ann.id], 'Owner name': ['Ann'] });
    expect((await trashList()).some((e) => e.id === entry.id)).toBe(false);
    expect((await c.request('POST', `/api/v1/trash/${entry.id}/restore`)).status).toBe(404);

    // A task (outgoing link, computed fields) round trips with the same values; a link to a record deleted meanwhile is dropped.
    ok(await c.request('DELETE', `/api/v1/tables/${tasks}/records/${t1.id}`));
    ok(await c.request('DELETE', `/api/v1/tables/${people}/records/${bob.id}`));
    const taskEntry = (await trashList()).find((e) => e.name === 'Paint');
    ok(await c.request('POST', `/api/v1/trash/${taskEntry.id}/restore`));
    const restored = ok(await get(tasks, t1.id));
    expect(restored.fields).toEqual({ ...before.fields, Owner: [ann.id], 'Owner name': ['Ann'] });
    expect(restored.created_at).toBe(before.created_at);

    // The restore is a creation in the event log.
    const events = ok(await c.request('GET', `/api/v1/bases/${baseId}/events?table_id=${tasks}&type=record.created`)).items as any[];
    expect(events.filter((e) => e.record_id === t1.id)).toHaveLength(2);
  });

  it('restores links within a table (a self-link), also between records deleted in one batch', async () => {
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId });
    ok(await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'Next', type: 'link', config: { table_id: t } } }), 201);
    const x = await create(t, { Name: 'x' });
    const y = await create(t, { Name: 'y', Next: [x.id] });
    const z = await create(t, { Name: 'z', Next: [y.id] });
    ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body: { action: 'delete', records: [x.id, y.id] } }));
    expect(ok(await get(t, z.id)).fields.Next).toBeNull();
    const entries = await trashList();
    for (const name of ['x', 'y']) ok(await c.request('POST', `/api/v1/trash/${entries.find((e) => e.table_id === t && e.name === name).id}/restore`));
    expect(ok(await get(t, y.id)).fields.Next).toEqual([x.id]);
    expect(ok(await get(t, z.id)).fields.Next).toEqual([y.id]);
  });

  it('a batch delete is one entry per record, and 1,000 records round trip', async () => {
    const made: any[] = [];
    for (let i = 0; i < 1000; i += 500) {
      const records = Array.from({ length: 500 }, (_x, j) => ({ fields: { Name: `p${i + j}`, Age: i + j } }));
      made.push(...ok<any>(await c.request('POST', `/api/v1/tables/${people}/records/batch`, { body: { action: 'create', records } })).items);
    }
    const started = performance.now();
    ok(await c.request('POST', `/api/v1/tables/${people}/records/batch`, { body: { action: 'delete', records: made.map((r) => r.id) } }));
    const ms = performance.now() - started;
    console.log(`batch delete of 1,000 records with trash entries: ${ms.toFixed(0)} ms`);
    const entries = (await trashList()).filter((e) => /^p\d+$/.test(e.name));
    expect(entries).toHaveLength(1000);
    for (const e of entries) ok(await c.request('POST', `/api/v1/trash/${e.id}/restore`));
    const byId = new Map<string, unknown>();
    for (const page of [1, 2]) {
      for (const r of ok<any>(await c.request('GET', `/api/v1/tables/${people}/records?page_size=1000&page=${page}`)).items) byId.set(r.id, r.fields);
    }
    for (const r of made) expect(byId.get(r.id)).toEqual(r.fields);
  });

  it('viewers cannot see or restore; editors restore records; only admins purge', async () => {
    const viewer = await c.user('Vera');
    const editor = await c.user('Ed');
    ok(await c.request('PUT', `/api/v1/bases/${baseId}/members/${viewer.id}`, { body: { role: 'viewer' } }));
    ok(await c.request('PUT', `/api/v1/bases/${baseId}/members/${editor.id}`, { body: { role: 'editor' } }));
    const r = await create(people, { Name: 'Gone', Age: 1 });
    ok(await c.request('DELETE', `/api/v1/tables/${people}/records/${r.id}`));
    expect((await c.request('GET', `/api/v1/bases/${baseId}/trash`, { token: viewer.token })).status).toBe(403);
    const entry = (await trashList(editor.token)).find((e) => e.name === 'Gone');
    expect((await c.request('POST', `/api/v1/trash/${entry.id}/restore`, { token: viewer.token })).status).toBe(403);
    expect((await c.request('DELETE', `/api/v1/trash/${entry.id}`, { token: editor.token })).status).toBe(403);
    ok(await c.request('POST', `/api/v1/trash/${entry.id}/restore`, { token: editor.token }));
    expect(ok(await get(people, r.id)).fields.Name).toBe('Gone');

    ok(await c.request('DELETE', `/api/v1/tables/${people}/records/${r.id}`, { token: editor.token }));
    const again = (await trashList()).find((e) => e.name === 'Gone');
    expect(again.deleted_by).toBe(editor.id);
    expect(ok(await c.request('DELETE', `/api/v1/trash/${again.id}`))).toEqual({ id: again.id, deleted: true });
    expect((await c.request('POST', `/api/v1/trash/${again.id}/restore`)).status).toBe(404);
  });

  it('restores a field with its values; a reused name answers 409 until it is free again', async () => {
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Score', type: 'number', indexed: true }, { name: 'Tags', type: 'multi_select', options: ['a', 'b'] }], { baseId });
    const rows = [];
    for (let i = 0; i < 5; i++) rows.push(await create(t, { Name: `n${i}`, Score: i * 1.5, Tags: i % 2 ? ['a', 'b'] : null }));
    const fields = ok<any>(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[];
    const tags = fields.find((f) => f.name === 'Tags');
    const score = fields.find((f) => f.name === 'Score');
    const before = ok<any>(await c.request('GET', `/api/v1/tables/${t}/records`)).items;
    ok(await c.request('DELETE', `/api/v1/tables/${t}/fields/${tags.id}`));
    ok(await c.request('DELETE', `/api/v1/tables/${t}/fields/${score.id}`));
    expect(ok<any>(await c.request('GET', `/api/v1/tables/${t}/records`)).items[1].fields).toEqual({ Name: 'n1' });
    const entries = await trashList();
    const tagsEntry = entries.find((e) => e.type === 'field' && e.name === 'Tags');
    expect(tagsEntry).toMatchObject({ table_id: t });
    const reused = ok<any>(await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'tags', type: 'text' } }), 201);
    const refused = await c.request('POST', `/api/v1/trash/${tagsEntry.id}/restore`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('CONFLICT');
    ok(await c.request('DELETE', `/api/v1/tables/${t}/fields/${reused.id}`));
    ok(await c.request('POST', `/api/v1/trash/${tagsEntry.id}/restore`));
    ok(await c.request('POST', `/api/v1/trash/${entries.find((e) => e.type === 'field' && e.name === 'Score').id}/restore`));
    const back = ok<any>(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[];
    expect(back.find((f) => f.name === 'Tags')).toEqual(tags);
    expect(back.find((f) => f.name === 'Score')).toEqual(score);
    expect(ok<any>(await c.request('GET', `/api/v1/tables/${t}/records`)).items).toEqual(before);
    void rows;
  });

  it('restores a table with 1,000 records, links and computed fields; editors see no field or table entries', async () => {
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }, { name: 'Person', type: 'link', config: { table_id: people } }], { baseId, name: 'Big' });
    ok(await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'Twice', type: 'formula', config: { expression: '{N} * 2' } } }), 201);
    const someone = await create(people, { Name: 'Linked', Age: 9 });
    for (let i = 0; i < 1000; i += 500) {
      const records = Array.from({ length: 500 }, (_x, j) => ({ fields: { Name: `r${i + j}`, N: i + j, Person: (i + j) % 100 ? null : [someone.id] } }));
      ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body: { action: 'create', records } }));
    }
    const read = async () => [
      ...ok<any>(await c.request('GET', `/api/v1/tables/${t}/records?page_size=1000&page=1`)).items,
      ...ok<any>(await c.request('GET', `/api/v1/tables/${t}/records?page_size=1000&page=2`)).items,
    ];
    const before = await read();
    expect(before).toHaveLength(1000);
    // Another table links to it: that link field goes with the table and comes back with its values.
    const refs = await makeTable(c, [{ name: 'Title', type: 'text' }, { name: 'Big ref', type: 'link', config: { table_id: t } }], { baseId, name: 'Refs' });
    const ref = await create(refs, { Title: 'r', 'Big ref': [before[0].id, before[999].id] });
    const fieldsBefore = ok<any>(await c.request('GET', `/api/v1/tables/${t}/fields`)).items;
    const started = performance.now();
    ok(await c.request('DELETE', `/api/v1/tables/${t}`));
    console.log(`deleting a table of 1,000 records into the trash: ${(performance.now() - started).toFixed(0)} ms`);
    expect((await c.request('GET', `/api/v1/tables/${t}`)).status).toBe(404);
    expect(ok(await get(refs, ref.id)).fields).toEqual({ Title: 'r' });
    const entry = (await trashList()).find((e) => e.type === 'table' && e.name === 'Big');
    expect(entry).toMatchObject({ table_id: t });
    const editor = await c.user('Ted');
    ok(await c.request('PUT', `/api/v1/bases/${baseId}/members/${editor.id}`, { body: { role: 'editor' } }));
    expect((await trashList(editor.token)).every((e) => e.type === 'record')).toBe(true);
    expect((await c.request('POST', `/api/v1/trash/${entry.id}/restore`, { token: editor.token })).status).toBe(403);

    const clash = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId, name: 'BIG' });
    expect((await c.request('POST', `/api/v1/trash/${entry.id}/restore`)).status).toBe(409);
    ok(await c.request('DELETE', `/api/v1/tables/${clash}`));
    ok(await c.request('POST', `/api/v1/trash/${entry.id}/restore`));
    expect(ok<any>(await c.request('GET', `/api/v1/tables/${t}`)).name).toBe('Big');
    expect(ok<any>(await c.request('GET', `/api/v1/tables/${t}/fields`)).items).toEqual(fieldsBefore);
    expect(await read()).toEqual(before);
    expect(ok(await get(refs, ref.id)).fields['Big ref']).toEqual([before[0].id, before[999].id]);
  });

  it('a restore is announced as a creation: record_created workflows run, events show the record and its holders\' links', async () => {
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Seen', type: 'checkbox' }], { baseId, name: 'Watched' });
    const holders = await makeTable(c, [{ name: 'Title', type: 'text' }, { name: 'Ref', type: 'link', config: { table_id: t } }], { baseId, name: 'Holders' });
    const wf = ok<any>(await c.request('POST', '/api/v1/workflows', {
      body: { name: 'mark', table_id: t, trigger: { type: 'record_created', config: {} }, nodes: [{ id: 'mark', type: 'update_record', config: { fields: { Seen: true } } }] },
    }), 201);
    const r = await create(t, { Name: 'w' });
    const h = await create(holders, { Title: 'h', Ref: [r.id] });
    const runs = async () => {
      await c.app.runner.idle();
      return ok<any>(await c.request('GET', `/api/v1/workflows/${wf.id}/logs?page_size=100`)).total as number;
    };
    expect(await runs()).toBe(1);
    ok(await c.request('PUT', `/api/v1/tables/${t}/records/${r.id}`, { body: { fields: { Seen: false } } }));
    ok(await c.request('DELETE', `/api/v1/tables/${t}/records/${r.id}`));
    const entry = (await trashList()).find((e) => e.table_id === t && e.name === 'w');
    ok(await c.request('POST', `/api/v1/trash/${entry.id}/restore`));
    expect(await runs()).toBe(2);
    expect(ok(await get(t, r.id)).fields).toEqual({ Name: 'w', Seen: true });
    expect(ok(await get(holders, h.id)).fields.Ref).toEqual([r.id]);
    const events = async (table: string, type: string) =>
      ok<any>(await c.request('GET', `/api/v1/bases/${baseId}/events?limit=1000&table_id=${table}&type=${type}`)).items as any[];
    expect((await events(t, 'record.created')).filter((e) => e.record_id === r.id).at(-1)).toMatchObject({ data: { after: { Name: 'w', Seen: false } } });
    expect((await events(holders, 'record.updated')).filter((e) => e.record_id === h.id).at(-1)).toMatchObject({ data: { before: { Ref: null }, after: { Ref: [r.id] } } });
    // The record's history: the workflow's change after the restore, the restore as a creation, the deletion before it.
    const history = ok<any[]>(await c.request('GET', `/api/v1/tables/${t}/records/${r.id}/history`));
    expect(history.slice(0, 3).map((e) => [e.type, e.actor.type])).toEqual([['updated', 'workflow'], ['created', 'user'], ['deleted', 'user']]);
    expect(history[0]).toMatchObject({ actor: { id: wf.id }, changes: { Seen: { before: false, after: true } } });
    ok(await c.request('DELETE', `/api/v1/workflows/${wf.id}`));
  });

  it('prunes entries past TRASH_RETENTION_DAYS', async () => {
    const r = await create(people, { Name: 'Old', Age: 2 });
    ok(await c.request('DELETE', `/api/v1/tables/${people}/records/${r.id}`));
    await c.app.services.trash.prune(Date.now() + 31 * 86_400_000);
    expect((await trashList()).some((e) => e.name === 'Old')).toBe(false);
  });
});

describe('a deleted base', () => {
  it('takes its trash with it', async () => {
    const base = ok<any>(await c.request('POST', '/api/v1/bases', { body: { name: 'Short-lived' } }), 201);
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId: base.id });
    const r = await create(t, { Name: 'x' });
    ok(await c.request('DELETE', `/api/v1/tables/${t}/records/${r.id}`));
    ok(await c.request('DELETE', `/api/v1/bases/${base.id}`));
    const { trash } = c.app.services.deps.store.schema;
    expect(await c.app.services.deps.store.db.select().from(trash)).not.toContainEqual(expect.objectContaining({ baseId: base.id }));
  });
});

describe('history', () => {
  it('lists a record\'s changes newest first with before and after per field', async () => {
    const r = await create(people, { Name: 'Hal', Age: 1 });
    ok(await c.request('PUT', `/api/v1/tables/${people}/records/${r.id}`, { body: { fields: { Age: 2 } } }));
    ok(await c.request('PUT', `/api/v1/tables/${people}/records/${r.id}`, { body: { fields: { Name: 'Hal 2', Age: 3 } } }));
    const h = ok<any[]>(await c.request('GET', `/api/v1/tables/${people}/records/${r.id}/history`));
    expect(h).toHaveLength(3);
    expect(h.map((e) => e.type)).toEqual(['updated', 'updated', 'created']);
    expect(h[0].changes).toEqual({ Name: { before: 'Hal', after: 'Hal 2' }, Age: { before: 2, after: 3 } });
    expect(h[1].changes).toEqual({ Age: { before: 1, after: 2 } });
    expect(h[2].changes).toEqual({ Name: { before: null, after: 'Hal' }, Age: { before: null, after: 1 } });
    expect(h[0].actor).toEqual({ type: 'user', id: expect.any(String) });
  });
});
