// Records end to end over /api/v1: create, read, update, delete, batches, filters, sorts and pagination.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient } from './helpers.js';

let c: TestClient;
let tableId: string;
const rec = (fields: Record<string, unknown>) => ({ fields });

beforeAll(async () => {
  c = await makeApp();
  tableId = await makeTable(c, [
    { name: 'Name', type: 'text', indexed: true },
    { name: 'Age', type: 'number' },
    { name: 'Tags', type: 'multi_select', options: ['red', 'green', 'blue'] },
    { name: 'Done', type: 'checkbox' },
  ]);
});
afterAll(() => c.close());

describe('records', () => {
  it('creates, reads, updates and deletes one record', async () => {
    const created = await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: rec({ Name: 'Ann', Age: 31 }) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ code: 0, msg: 'success', data: { fields: { Name: 'Ann', Age: 31, Tags: null, Done: false } } });
    const id = created.body.data.id;
    expect(id).toMatch(/^rec/);
    expect(created.body.data.created_at).toBe(created.body.data.updated_at);

    const updated = await c.request('PUT', `/api/v1/tables/${tableId}/records/${id}`, { body: rec({ Age: 32, Tags: ['red'] }) });
    expect(updated.status).toBe(200);
    expect(updated.body.data.fields).toEqual({ Name: 'Ann', Age: 32, Tags: ['red'], Done: false });

    const read = await c.request('GET', `/api/v1/tables/${tableId}/records/${id}`);
    expect(read.body.data.fields.Age).toBe(32);

    const del = await c.request('DELETE', `/api/v1/tables/${tableId}/records/${id}`);
    expect(del.body).toEqual({ code: 0, msg: 'success', data: { id, deleted: true } });
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records/${id}`)).status).toBe(404);
  });

  it('batch create is all or nothing and names the bad item', async () => {
    const before = (await c.request('GET', `/api/v1/tables/${tableId}/records`)).body.data.total;
    const bad = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, {
      body: { action: 'create', records: [rec({ Name: 'ok' }), rec({ Name: 'ok2' }), rec({ Age: 'old' })] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('BAD_REQUEST');
    expect(bad.body.details).toEqual([{ index: 2, field: 'Age', message: 'field "Age": expected a number, got a string' }]);
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records`)).body.data.total).toBe(before);

    const good = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, {
      body: { action: 'create', records: [rec({ Name: 'b1', Age: 1 }), rec({ Name: 'b2', Age: 2 })] },
    });
    expect(good.status).toBe(200);
    expect(good.body.data.items.map((r: any) => r.fields.Name)).toEqual(['b1', 'b2']);
    const ids = good.body.data.items.map((r: any) => r.id);

    const missing = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, {
      body: { action: 'update', records: [{ id: ids[0], fields: { Age: 10 } }, { id: 'recmissing', fields: { Age: 11 } }] },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.details[0].index).toBe(1);
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records/${ids[0]}`)).body.data.fields.Age).toBe(1);

    const deleted = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, { body: { action: 'delete', records: ids.map((id: string) => ({ id })) } });
    expect(deleted.body.data).toEqual({ deleted: ids });
  });

  it('filters, sorts with empty values last, and paginates with a clamped page size', async () => {
    const t = await makeTable(c, [{ name: 'N', type: 'text' }, { name: 'V', type: 'number' }, { name: 'T', type: 'multi_select', options: ['x', 'y'] }]);
    await c.request('POST', `/api/v1/tables/${t}/records/batch`, {
      body: {
        action: 'create',
        records: [
          rec({ N: 'alpha', V: 3, T: ['x'] }), rec({ N: 'Beta', V: null, T: ['y'] }), rec({ N: 'gamma', V: 1, T: ['x', 'y'] }), rec({ N: null, V: 2 }),
        ],
      },
    });
    const list = (q: string) => c.request('GET', `/api/v1/tables/${t}/records?${q}`);
    const names = (r: any) => r.body.data.items.map((x: any) => x.fields.N);
    const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));

    expect(names(await list(`sort=${enc([{ field: 'V', direction: 'asc' }])}`))).toEqual(['gamma', null, 'alpha', 'Beta']);
    expect(names(await list(`sort=${enc([{ field: 'V', direction: 'desc' }])}`))).toEqual(['alpha', null, 'gamma', 'Beta']);
    expect(names(await list(`filter=${enc({ field: 'N', operator: 'contains', value: 'ET' })}`))).toEqual(['Beta']);
    expect(names(await list(`filter=${enc({ conjunction: 'or', conditions: [{ field: 'V', operator: 'gte', value: 3 }, { field: 'N', operator: 'is_empty' }] })}`))).toEqual(['alpha', null]);
    expect(names(await list(`filter=${enc([{ field: 'T', operator: 'has_all', value: ['x', 'y'] }])}`))).toEqual(['gamma']);
    expect(names(await list(`filter=${enc({ field: 'T', operator: 'has_none', value: ['x'] })}`))).toEqual(['Beta', null]);
    expect(names(await list(`filter=${enc({ conjunction: 'and', conditions: [{ conjunction: 'or', conditions: [{ field: 'N', operator: 'starts_with', value: 'a' }, { field: 'N', operator: 'ends_with', value: 'MA' }] }] })}`))).toEqual(['alpha', 'gamma']);

    const page = await list('page=2&page_size=3');
    expect(page.body.data).toMatchObject({ total: 4, page: 2, page_size: 3 });
    expect(names(page)).toEqual([null]);
    expect((await list('page_size=5000')).body.data.page_size).toBe(1000);
    for (const q of ['page_size=0', 'page_size=-1', 'page=abc', 'page_size=1.5']) {
      const r = await list(q);
      expect(r.status, q).toBe(400);
      expect(r.body.msg).toMatch(/page/);
    }
  });

  it('a page answers every field under its own name, whatever characters the name holds, and repeated multi-select values alike', async () => {
    const names = ['say "hi"', 'back\\slash', 'line\u2028break', '${x}`', '7', 'constructor'];
    const t = await makeTable(c, [...names.map((name) => ({ name, type: 'text' })), { name: 'Tags', type: 'multi_select', options: ['red', 'blue'] }]);
    const fields = (i: number) => ({ ...Object.fromEntries(names.map((n) => [n, `${n} ${i}`])), Tags: i % 2 ? ['red', 'blue'] : ['red'] });
    const body = { action: 'create', records: [0, 1, 2, 3].map((i) => rec(fields(i))) };
    expect((await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body })).status).toBe(200);
    const page = await c.request('GET', `/api/v1/tables/${t}/records?page_size=10`);
    expect(page.body.data.items.map((r: { fields: unknown }) => r.fields)).toEqual([0, 1, 2, 3].map(fields));
    const gql = await c.graphql('query($t: ID!) { records(tableId: $t) { items { fields } } }', { t });
    expect(gql.body.data.records.items.map((r: { fields: unknown }) => r.fields)).toEqual([0, 1, 2, 3].map(fields));
  });

  it('a create answers what a read gives back, for every type stored as written (the answer is built without reading)', async () => {
    const user = await c.user('Wren');
    const t = await makeTable(c, [
      { name: 'Text', type: 'text' }, { name: 'Long', type: 'long_text' }, { name: 'N', type: 'number' }, { name: 'Done', type: 'checkbox' },
      { name: 'Due', type: 'date' }, { name: 'Mail', type: 'email' }, { name: 'Site', type: 'url' }, { name: 'Tel', type: 'phone' },
      { name: 'Stars', type: 'rating' }, { name: 'Pick', type: 'single_select', options: ['a', 'b'] }, { name: 'Who', type: 'user' },
    ], { baseId: user.defaultBaseId, token: user.token });
    const records = [
      { Text: 'x', Long: 'line\nline', N: 1.5, Done: true, Due: '2026-02-03', Mail: 'a@example.com', Site: 'https://example.com', Tel: '+1 555 0100', Stars: 4, Pick: 'b', Who: user.id },
      { N: -7, Done: false, Due: '2026-02-03T04:05:06.789Z' },
      {},
    ].map((fields) => ({ fields }));
    const created = await c.request('POST', `/api/v1/tables/${t}/records/batch`, { token: user.token, body: { action: 'create', records } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const single = await c.request('POST', `/api/v1/tables/${t}/records`, { token: user.token, body: { fields: { N: 3, Text: 'one' } } });
    expect(single.status).toBe(201);
    for (const r of [...created.body.data.items, single.body.data]) {
      const read = await c.request('GET', `/api/v1/tables/${t}/records/${r.id}`, { token: user.token });
      expect(read.body.data).toEqual(r);
    }
  });
});

