// Views (contract section 13): every rule through the REST API, the view_id of both record lists and of export, sharing
// by link (read-only pages, public forms with their rules and rate limit), and the events they write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient } from './helpers.js';

let c: TestClient;
let baseId: string;
let tableId: string;
let editor: { id: string; token: string };
let viewer: { id: string; token: string };
let admin: { id: string; token: string };

const FIELDS = [
  { name: 'Title', type: 'text' },
  { name: 'Status', type: 'single_select', options: ['Todo', 'Doing', 'Done'] },
  { name: 'Due', type: 'date' },
  { name: 'Points', type: 'number' },
  { name: 'Secret', type: 'text' },
  { name: 'Owner', type: 'user' },
];

beforeAll(async () => {
  c = await makeApp({ TRUST_PROXY: 'true' });
  const base = await c.request('POST', '/api/v1/bases', { body: { name: 'Views base' } });
  baseId = base.body.data.id;
  editor = await c.user('Editor');
  viewer = await c.user('Viewer');
  admin = await c.user('BaseAdmin');
  for (const [u, role] of [[editor, 'editor'], [viewer, 'viewer'], [admin, 'admin']] as const) {
    const res = await c.request('PUT', `/api/v1/bases/${baseId}/members/${u.id}`, { body: { role } });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  }
  tableId = await makeTable(c, FIELDS, { baseId });
  const records = ['Todo', 'Doing', 'Done', 'Todo', null].map((s, i) => ({ fields: { Title: `T${i}`, Status: s, Points: i, Secret: `hidden-value-${i}`, Due: `2026-11-0${i + 1}` } }));
  const res = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, { body: { action: 'create', records } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
});
afterAll(() => c.close());

const create = (body: Record<string, unknown>, token?: string) => c.request('POST', `/api/v1/tables/${tableId}/views`, { body, token });
const fieldId = async (name: string) => {
  const res = await c.request('GET', `/api/v1/tables/${tableId}/fields`);
  return res.body.data.items.find((f: { name: string }) => f.name === name).id as string;
};

describe('views', () => {
  it('a new table has one grid view named "Grid view", and the last view cannot be deleted', async () => {
    const t = await makeTable(c, [{ name: 'A', type: 'text' }], { baseId });
    const list = await c.request('GET', `/api/v1/tables/${t}/views`);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ name: 'Grid view', type: 'grid', personal: false, locked: false, hidden_fields: [], field_order: [] });
    expect(list.body.data[0].id).toMatch(/^viw/);
    const del = await c.request('DELETE', `/api/v1/views/${list.body.data[0].id}`);
    expect(del.status).toBe(409);
    expect(del.body.error).toBe('CONFLICT');
    // Nor can the last view others see become personal.
    expect((await c.request('PUT', `/api/v1/views/${list.body.data[0].id}`, { body: { personal: true } })).status).toBe(409);
  });

  it('stores filter, sort, hidden fields and order by field id, so a rename breaks nothing', async () => {
    const res = await create({
      name: 'Open work', filter: { conjunction: 'and', conditions: [{ field: 'Status', operator: 'neq', value: 'Done' }] },
      sort: [{ field: 'Points', direction: 'desc' }], hidden_fields: ['Secret'], field_order: ['Points', 'Title'],
    }, editor.token);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const status = await fieldId('Status');
    expect(res.body.data.filter).toEqual({ conjunction: 'and', conditions: [{ field: status, operator: 'neq', value: 'Done' }] });
    expect(res.body.data.sort).toEqual([{ field: await fieldId('Points'), direction: 'desc' }]);
    expect(res.body.data.hidden_fields).toEqual([await fieldId('Secret')]);
    expect(res.body.data.created_by).toBe(editor.id);
    await c.request('PUT', `/api/v1/tables/${tableId}/fields/${status}`, { body: { name: 'State' } });
    const page = await c.request('GET', `/api/v1/tables/${tableId}/records?view_id=${res.body.data.id}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    // Empty Status is not "Done": four records, highest points first, Secret left out, view's order first.
    expect(page.body.data.items.map((r: any) => r.fields.Title)).toEqual(['T4', 'T3', 'T1', 'T0']);
    expect(Object.keys(page.body.data.items[0].fields)).toEqual(['Points', 'Title', 'State', 'Due', 'Owner']);
    // The request's filter is ANDed; its sort replaces the view's.
    const more = await c.request('GET', `/api/v1/tables/${tableId}/records?view_id=${res.body.data.id}&filter=${encodeURIComponent(JSON.stringify({ field: 'Points', operator: 'gte', value: 1 }))}&sort=${encodeURIComponent(JSON.stringify([{ field: 'Title' }]))}`);
    expect(more.body.data.items.map((r: any) => r.fields.Title)).toEqual(['T1', 'T3', 'T4']);
    await c.request('PUT', `/api/v1/tables/${tableId}/fields/${status}`, { body: { name: 'Status' } });
  });

  it('answers 400 naming the problem, and 409 for a name taken', async () => {
    expect((await create({ name: 'Bad', filter: { field: 'Nope', operator: 'eq', value: 1 } })).body.msg).toMatch(/filter: unknown field "Nope"/);
    expect((await create({ name: 'Bad', type: 'kanban', config: { group_field: 'Title' } })).body.msg).toMatch(/config.group_field/);
    expect((await create({ name: 'Bad', type: 'calendar', config: {} })).body.msg).toMatch(/config.date_field/);
    expect((await create({ name: 'Bad', hidden_fields: ['Ghost'] })).body.details[0].field).toBe('hidden_fields');
    expect((await create({ name: 'Bad', type: 'chart' })).status).toBe(400);
    expect((await create({ name: 'Bad', type: 'form', config: { fields: [{ field: 'Owner' }] } })).body.details[0].field).toBe('config.fields[0]');
    expect((await create({ name: 'open WORK' })).status).toBe(409);
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records?view_id=viwnothing`)).body.details[0].field).toBe('view_id');
  });

  it('editors create views, viewers do not; personal views are invisible to others', async () => {
    expect((await create({ name: 'By viewer' }, viewer.token)).status).toBe(403);
    const mine = await create({ name: 'Mine', personal: true }, editor.token);
    expect(mine.status).toBe(201);
    const others = await c.request('GET', `/api/v1/tables/${tableId}/views`, { token: admin.token });
    expect(others.body.data.map((v: any) => v.name)).not.toContain('Mine');
    expect((await c.request('GET', `/api/v1/views/${mine.body.data.id}`, { token: admin.token })).status).toBe(404);
    expect((await c.request('PUT', `/api/v1/views/${mine.body.data.id}`, { token: admin.token, body: { name: 'Taken' } })).status).toBe(404);
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records?view_id=${mine.body.data.id}`, { token: admin.token })).status).toBe(400);
    const own = await c.request('GET', `/api/v1/tables/${tableId}/views`, { token: editor.token });
    expect(own.body.data.map((v: any) => v.name)).toContain('Mine');
  });

  it('locked views: only base admins change, delete, lock or unlock them', async () => {
    expect((await create({ name: 'Locked by editor', locked: true }, editor.token)).status).toBe(403);
    const v = await create({ name: 'Board', type: 'kanban', config: { group_field: 'Status' }, locked: true }, admin.token);
    expect(v.status, JSON.stringify(v.body)).toBe(201);
    const id = v.body.data.id;
    expect(v.body.data.config).toEqual({ group_field: await fieldId('Status') });
    expect((await c.request('PUT', `/api/v1/views/${id}`, { token: viewer.token, body: { name: 'X' } })).status).toBe(403);
    expect((await c.request('PUT', `/api/v1/views/${id}`, { token: editor.token, body: { name: 'X' } })).status).toBe(403);
    expect((await c.request('DELETE', `/api/v1/views/${id}`, { token: editor.token })).status).toBe(403);
    const renamed = await c.request('PUT', `/api/v1/views/${id}`, { token: admin.token, body: { name: 'Kanban' } });
    expect(renamed.body.data.name).toBe('Kanban');
    const open = await create({ name: 'Unlocked' }, editor.token);
    expect((await c.request('PUT', `/api/v1/views/${open.body.data.id}`, { token: editor.token, body: { locked: true } })).status).toBe(403);
    expect((await c.request('PUT', `/api/v1/views/${open.body.data.id}`, { token: editor.token, body: { hidden_fields: ['Due'] } })).status).toBe(200);
    expect((await c.request('DELETE', `/api/v1/views/${open.body.data.id}`, { token: editor.token })).status).toBe(200);
  });

  it('a field a view needs cannot be deleted (409); one it only hides or sorts by is dropped from it', async () => {
    const status = await fieldId('Status');
    const del = await c.request('DELETE', `/api/v1/tables/${tableId}/fields/${status}`);
    expect(del.status).toBe(409);
    expect(del.body.msg).toMatch(/view "Kanban"/);
    const extra = await c.request('POST', `/api/v1/tables/${tableId}/fields`, { body: { name: 'Scratch', type: 'number' } });
    const v = await create({ name: 'Scratchy', sort: [{ field: 'Scratch' }], hidden_fields: ['Scratch'], filter: { field: 'Scratch', operator: 'is_empty' } });
    expect((await c.request('DELETE', `/api/v1/tables/${tableId}/fields/${extra.body.data.id}`)).status).toBe(200);
    expect(v.body.data.filter).toEqual({ conjunction: 'and', conditions: [{ field: extra.body.data.id, operator: 'is_empty' }] });
    const after = await c.request('GET', `/api/v1/views/${v.body.data.id}`);
    expect(after.body.data).toMatchObject({ filter: null, sort: null, hidden_fields: [] });
  });

  it('a grid keeps its column widths by field id; a deleted field leaves them', async () => {
    const v = await create({ name: 'Wide', config: { column_widths: { Title: 320 } } });
    expect(v.body.data.config).toEqual({ column_widths: { [await fieldId('Title')]: 320 } });
    expect((await c.request('PUT', `/api/v1/views/${v.body.data.id}`, { body: { config: { column_widths: { Nope: 100 } } } })).body.details[0].field).toBe('config.column_widths');
    const extra = await c.request('POST', `/api/v1/tables/${tableId}/fields`, { body: { name: 'Temp', type: 'text' } });
    await c.request('PUT', `/api/v1/views/${v.body.data.id}`, { body: { config: { column_widths: { Title: 300, Temp: 90 } } } });
    await c.request('DELETE', `/api/v1/tables/${tableId}/fields/${extra.body.data.id}`);
    expect((await c.request('GET', `/api/v1/views/${v.body.data.id}`)).body.data.config).toEqual({ column_widths: { [await fieldId('Title')]: 300 } });
  });

  it('view changes are events, written with the change', async () => {
    const ev = await c.request('GET', `/api/v1/bases/${baseId}/events?type=view.created&limit=1000`);
    expect(ev.body.data.items.length).toBeGreaterThan(3);
    expect(ev.body.data.items[0]).toMatchObject({ type: 'view.created', table_id: expect.any(String) });
    const upd = await c.request('GET', `/api/v1/bases/${baseId}/events?type=view.updated&limit=1000`);
    expect(upd.body.data.items.length).toBeGreaterThan(0);
    const del = await c.request('GET', `/api/v1/bases/${baseId}/events?type=view.deleted&limit=1000`);
    expect(del.body.data.items.length).toBeGreaterThan(0);
  });

  it('export of a view uses its filter, sort and visible fields', async () => {
    const v = await create({ name: 'Export me', filter: { field: 'Status', operator: 'eq', value: 'Todo' }, sort: [{ field: 'Title', direction: 'desc' }], hidden_fields: ['Secret', 'Due', 'Owner', 'Points'] });
    const res = await c.request('GET', `/api/v1/tables/${tableId}/export?view_id=${v.body.data.id}`);
    expect(res.status).toBe(200);
    expect(res.text.trim().split('\r\n')).toEqual(['Title,Status', 'T3,Todo', 'T0,Todo']);
    expect((await c.request('GET', `/api/v1/tables/${tableId}/export?view_id=viwmissing`)).status).toBe(400);
  });

  it("a view list's total follows record writes and a change of the view's filter", async () => {
    const v = (await create({ name: 'Counted', filter: { field: 'Status', operator: 'eq', value: 'Doing' } })).body.data;
    const total = async () => {
      const res = await c.request('GET', `/api/v1/tables/${tableId}/records?view_id=${v.id}&page_size=1`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.total as number;
    };
    expect(await total()).toBe(1);
    expect(await total()).toBe(1);
    const made = await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Title: 'counted', Status: 'Doing' } } });
    expect(made.status).toBe(201);
    expect(await total()).toBe(2);
    const changed = await c.request('PUT', `/api/v1/views/${v.id}`, { body: { filter: { field: 'Status', operator: 'eq', value: 'Todo' } } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(await total()).toBe(2);
    // A filter given as a parameter on top of the view narrows it, and is counted apart.
    const both = await c.request('GET', `/api/v1/tables/${tableId}/records?view_id=${v.id}&filter=${encodeURIComponent(JSON.stringify({ field: 'Title', operator: 'eq', value: 'T0' }))}`);
    expect(both.body.data.total).toBe(1);
    await c.request('DELETE', `/api/v1/tables/${tableId}/records/${made.body.data.id}`);
    await c.request('DELETE', `/api/v1/views/${v.id}`);
  });

  it('GraphQL lists views and pages records through a view', async () => {
    const views = await c.graphql('query($t: ID!) { views(tableId: $t) { id name type hiddenFields } }', { t: tableId });
    const v = views.body.data.views.find((x: any) => x.name === 'Open work');
    const recs = await c.graphql('query($t: ID!, $v: ID) { records(tableId: $t, viewId: $v) { total items { fields } } }', { t: tableId, v: v.id });
    expect(recs.body.data.records.total).toBe(4);
    expect(recs.body.data.records.items[0].fields.Secret).toBeUndefined();
  });
});

describe('sharing by link', () => {
  let gridView: string;
  let shareId: string;

  it('shares a read-only view (base admins) that reveals nothing else', async () => {
    const v = await create({ name: 'Public grid', filter: { field: 'Status', operator: 'eq', value: 'Todo' }, hidden_fields: ['Secret'], config: { column_widths: { Secret: 300, Title: 250 } } });
    gridView = v.body.data.id;
    expect((await c.request('POST', `/api/v1/views/${gridView}/share`, { token: editor.token })).status).toBe(403);
    const s = await c.request('POST', `/api/v1/views/${gridView}/share`);
    expect(s.status).toBe(200);
    shareId = s.body.data.share_id;
    expect(s.body.data.url).toBe(`http://test.local/share/${shareId}`);
    expect(shareId).not.toContain(gridView);
    const desc = await c.request('GET', `/api/share/${shareId}`, { token: null });
    expect(desc.status).toBe(200);
    expect(desc.body.data).toMatchObject({ name: 'Public grid', type: 'grid' });
    expect(desc.body.data.fields.map((f: any) => f.name)).toEqual(['Title', 'Status', 'Due', 'Points']);
    const recs = await c.request('GET', `/api/share/${shareId}/records`, { token: null });
    expect(recs.status).toBe(200);
    expect(recs.body.data.items.map((r: any) => r.fields.Title)).toEqual(['T0', 'T3']);
    const text = JSON.stringify([desc.body, recs.body]);
    for (const secret of ['hidden-value-0', 'hidden-value-3', 'Secret', 'Owner', editor.id, admin.id, tableId, baseId, gridView, await fieldId('Secret'), await fieldId('Owner')]) expect(text).not.toContain(secret);
    expect((await c.request('POST', `/api/share/${shareId}/submit`, { token: null, body: { fields: { Title: 'x' } } })).status).toBe(404);
  });

  it('a stopped share answers 404, and sharing again gives a new id', async () => {
    expect((await c.request('DELETE', `/api/v1/views/${gridView}/share`)).status).toBe(200);
    expect((await c.request('GET', `/api/share/${shareId}`, { token: null })).status).toBe(404);
    expect((await c.request('GET', `/api/share/${shareId}/records`, { token: null })).status).toBe(404);
    const again = await c.request('POST', `/api/v1/views/${gridView}/share`);
    expect(again.body.data.share_id).not.toBe(shareId);
    expect((await c.request('GET', `/api/share/${shareId}`, { token: null })).status).toBe(404);
  });

  it('a public form creates records under its rules, as actor "share", 30 a minute per address', async () => {
    const form = await create({
      name: 'Request form', type: 'form', hidden_fields: ['Secret'],
      config: { title: 'Ask', fields: [{ field: 'Title', required: true, label: 'Your title' }, { field: 'Status' }, { field: 'Secret' }], submit_message: 'Thanks!' },
    });
    expect(form.status, JSON.stringify(form.body)).toBe(201);
    const share = (await c.request('POST', `/api/v1/views/${form.body.data.id}/share`)).body.data.share_id;
    const desc = await c.request('GET', `/api/share/${share}`, { token: null });
    expect(desc.body.data.config.submit_message).toBe('Thanks!');
    expect(desc.body.data.fields.map((f: any) => f.name)).toEqual(['Title', 'Status']);
    expect((await c.request('GET', `/api/share/${share}/records`, { token: null })).status).toBe(404);
    const submit = (fields: unknown, address = '203.0.113.7') =>
      c.request('POST', `/api/share/${share}/submit`, { token: null, body: { fields }, headers: { 'x-forwarded-for': address } });
    const ok = await submit({ Title: 'From the public', Status: 'Doing' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const rec = await c.request('GET', `/api/v1/tables/${tableId}/records/${ok.body.data.id}`);
    expect(rec.body.data.fields).toMatchObject({ Title: 'From the public', Status: 'Doing' });
    const ev = await c.request('GET', `/api/v1/bases/${baseId}/events?type=record.created&limit=1000`);
    expect(ev.body.data.items.find((e: any) => e.record_id === ok.body.data.id).actor).toEqual({ type: 'share', id: form.body.data.id });
    const hidden = await submit({ Title: 'x', Secret: 'sneaky' });
    expect(hidden.status).toBe(400);
    expect(hidden.body.details[0].field).toBe('Secret');
    expect((await submit({ Title: 'x', Points: 3 })).status).toBe(400);
    const missing = await submit({ Status: 'Done' });
    expect(missing.status).toBe(400);
    expect(missing.body.msg).toMatch(/Your title/);
    expect((await submit({ Title: 'x', Status: 'Nope' })).status).toBe(400);
    // 5 so far from this address (accepted or not); 25 more are accepted, the 31st is refused.
    for (let i = 0; i < 25; i++) expect((await submit({ Title: `n${i}` })).status).toBe(201);
    const limited = await submit({ Title: 'one too many' });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('RATE_LIMITED');
    expect(limited.headers.get('retry-after')).toBeTruthy();
    expect((await submit({ Title: 'elsewhere' }, '203.0.113.8')).status).toBe(201);
  });
});
