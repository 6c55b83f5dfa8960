// The Open API (spec 1 section 4.3, contract section 6): every endpoint with its scope, the base allow-list,
// 404s for what is not inside the base of the path, pagination, filter and sort, keyword search, writes keyed
// by field id or name, the application as operator, and the generated OpenAPI document with real answers.
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';
import { testSql } from './database.js';

type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats: FormatsPlugin = (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

const ALL_SCOPES = ['base:read', 'table:read', 'field:read', 'record:read', 'record:write', 'table:write'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const O = '/api/open/v1/bases';

let c: TestClient;
let app: { id: string; client_id: string; client_secret: string };
let token: string;
/** Allowed, holds the tables below. */
let baseId: string;
/** Allowed too, with a table of its own. */
let base2Id: string;
/** Not in the allow-list. */
let outsideId: string;
/** In the allow-list, then deleted. */
let goneId: string;
let tableId: string; // search/write table in baseId
let table2Id: string; // another table in baseId
let pagedId: string; // 45 records in baseId
let base2TableId: string;
let outsideTableId: string;
const F: Record<string, string> = {}; // field name → id of tableId
const R: Record<string, string> = {}; // record label → id in tableId

async function issue(scope?: string): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, ...(scope ? { scope } : {}) });
  const res = await c.request('POST', '/api/oauth/token', { token: null, raw: body.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token;
}

function expectOpenError(res: TestResponse, status: number, error: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ code: status, message: expect.any(String), error, request_id: res.headers.get('x-request-id') });
}

function expectOk(res: TestResponse, status = 200) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.code).toBe(0);
  expect(typeof res.body.message).toBe('string');
  expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  return res.body.data;
}

const open = (method: string, url: string, opts: { body?: unknown; t?: string; headers?: Record<string, string> } = {}) =>
  c.request(method, url, { token: opts.t ?? token, body: opts.body, headers: opts.headers });
const recs = (t = tableId, b = baseId) => `${O}/${b}/tables/${t}/records`;

async function v1Create(t: string, records: Array<Record<string, unknown>>): Promise<string[]> {
  const res = await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body: { action: 'create', records: records.map((fields) => ({ fields })) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.items.map((r: any) => r.id);
}

beforeAll(async () => {
  c = await makeApp();
  const mk = async (name: string) => {
    const res = await c.request('POST', '/api/v1/bases', { body: { name } });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  baseId = await mk('Open base');
  base2Id = await mk('Second open base');
  outsideId = await mk('Outside base');
  goneId = await mk('Gone base');
  tableId = await makeTable(c, [
    { name: 'Name', type: 'text' },
    { name: 'Notes', type: 'long_text' },
    { name: 'Email', type: 'email' },
    { name: 'Site', type: 'url' },
    { name: 'Phone', type: 'phone' },
    { name: 'Color', type: 'single_select', options: ['Red', 'Green', 'Blue'] },
    { name: 'Tags', type: 'multi_select', options: ['urgent', 'home', 'work'] },
    { name: 'Count', type: 'number' },
    { name: 'Done', type: 'checkbox' },
  ], { baseId, name: 'Things' });
  table2Id = await makeTable(c, [{ name: 'Title', type: 'text' }], { baseId, name: 'Other things' });
  pagedId = await makeTable(c, [{ name: 'Label', type: 'text' }, { name: 'N', type: 'number' }], { baseId, name: 'Paged' });
  base2TableId = await makeTable(c, [{ name: 'Title', type: 'text' }], { baseId: base2Id, name: 'In base 2' });
  outsideTableId = await makeTable(c, [{ name: 'Title', type: 'text' }], { baseId: outsideId, name: 'Outside table' });
  await makeTable(c, [{ name: 'Title', type: 'text' }], { baseId: goneId, name: 'Gone table' });

  const fields = await c.request('GET', `/api/v1/tables/${tableId}/fields`);
  for (const f of fields.body.data.items) F[f.name] = f.id;

  const ids = await v1Create(tableId, [
    { Name: 'Alpha Widget', Notes: 'The quick brown fox', Email: 'alice@example.com', Color: 'Red', Tags: ['urgent', 'home'], Count: 12345 },
    { Name: 'Beta Gadget', Notes: 'lazy dog sleeps', Site: 'https://gadgets.io/shop', Phone: '+1 555 0100', Color: 'Green', Count: 42 },
    { Name: 'Gamma', Notes: 'fox and dog', Tags: ['work'], Count: 7 },
    { Name: 'École Été', Notes: 'ÇA VA' },
  ]);
  [R.alpha, R.beta, R.gamma, R.ecole] = ids;
  await v1Create(pagedId, Array.from({ length: 45 }, (_, i) => ({ Label: `P${String(i + 1).padStart(2, '0')}`, N: i + 1 })));
  await v1Create(table2Id, [{ Title: 'elsewhere' }]);
  await v1Create(outsideTableId, [{ Title: 'outside' }]);

  const created = await c.request('POST', '/api/oauth/apps', {
    body: { app_name: 'Open API client', callback_url: 'https://client.example/cb', scopes: ALL_SCOPES, allowed_bases: [baseId, base2Id, goneId] },
  });
  expect(created.status).toBe(201);
  app = created.body.data;
  token = await issue();
  const del = await c.request('DELETE', `/api/v1/bases/${goneId}`);
  expect(del.status).toBe(200);
});
afterAll(() => c?.close());

describe('bases, tables and fields', () => {
  it('GET /bases lists the bases of the allow-list that exist', async () => {
    const data = expectOk(await open('GET', O));
    expect(data.map((b: any) => b.id).sort()).toEqual([baseId, base2Id].sort());
    const b = data.find((x: any) => x.id === baseId);
    expect(b).toMatchObject({ id: baseId, name: 'Open base' });
  });

  it('GET /bases/{id} gives the base with its tables', async () => {
    const data = expectOk(await open('GET', `${O}/${baseId}`));
    expect(data).toMatchObject({ id: baseId, name: 'Open base' });
    expect(data.tables.map((t: any) => t.id)).toEqual([tableId, table2Id, pagedId]);
    expect(data.tables[0]).toMatchObject({ id: tableId, name: 'Things' });
  });

  it('GET /bases/{id}/tables and /tables/{id} (with its fields)', async () => {
    const tables = expectOk(await open('GET', `${O}/${baseId}/tables`));
    expect(tables.map((t: any) => [t.id, t.name])).toEqual([[tableId, 'Things'], [table2Id, 'Other things'], [pagedId, 'Paged']]);
    const detail = expectOk(await open('GET', `${O}/${baseId}/tables/${tableId}`));
    expect(detail).toMatchObject({ id: tableId, name: 'Things' });
    expect(detail.fields.map((f: any) => f.id)).toEqual(Object.values(F));
  });

  it('GET .../fields gives id, name, type, required, options and config of every field', async () => {
    const fields = expectOk(await open('GET', `${O}/${baseId}/tables/${tableId}/fields`));
    expect(fields.map((f: any) => [f.id, f.name, f.type])).toEqual([
      [F.Name, 'Name', 'text'], [F.Notes, 'Notes', 'long_text'], [F.Email, 'Email', 'email'], [F.Site, 'Site', 'url'],
      [F.Phone, 'Phone', 'phone'], [F.Color, 'Color', 'single_select'], [F.Tags, 'Tags', 'multi_select'], [F.Count, 'Count', 'number'],
      [F.Done, 'Done', 'checkbox'],
    ]);
    for (const f of fields) {
      for (const key of ['id', 'name', 'type', 'required', 'options', 'config']) expect(f, `${f.name}.${key}`).toHaveProperty(key);
    }
    expect(fields.find((f: any) => f.name === 'Color').options).toEqual(['Red', 'Green', 'Blue']);
    expect(fields.find((f: any) => f.name === 'Name').options).toBeNull();
    expect(fields.find((f: any) => f.name === 'Name').required).toBe(false);
  });
});

describe('the allow-list and what is not inside the base of the path', () => {
  it('a base outside allowed_bases → 403 forbidden, whether or not it exists', async () => {
    for (const b of [outsideId, 'bseDoesNotExist000']) {
      expectOpenError(await open('GET', `${O}/${b}`), 403, 'forbidden');
      expectOpenError(await open('GET', `${O}/${b}/tables`), 403, 'forbidden');
      expectOpenError(await open('GET', `${O}/${b}/tables/${outsideTableId}`), 403, 'forbidden');
      expectOpenError(await open('GET', `${O}/${b}/tables/${outsideTableId}/fields`), 403, 'forbidden');
      expectOpenError(await open('GET', `${O}/${b}/tables/${outsideTableId}/records`), 403, 'forbidden');
      expectOpenError(await open('GET', `${O}/${b}/tables/${outsideTableId}/records/search?q=outside`), 403, 'forbidden');
      expectOpenError(await open('POST', `${O}/${b}/tables/${outsideTableId}/records`, { body: { Title: 'sneaky' } }), 403, 'forbidden');
    }
    const v1 = await c.request('GET', `/api/v1/tables/${outsideTableId}/records`);
    expect(v1.body.data.items.map((r: any) => r.fields.Title)).toEqual(['outside']);
  });

  it('a deleted base still in allowed_bases → 404 not_found', async () => {
    const detail = await c.request('GET', `/api/oauth/apps/${app.id}`);
    expect(detail.body.data.allowed_bases).toContain(goneId);
    expectOpenError(await open('GET', `${O}/${goneId}`), 404, 'not_found');
    expectOpenError(await open('GET', `${O}/${goneId}/tables`), 404, 'not_found');
    expectOpenError(await open('GET', `${O}/${goneId}/tables/tblNope/records`), 404, 'not_found');
  });

  it('a table of another base under this base → 404; an unknown table → 404', async () => {
    for (const t of [base2TableId, outsideTableId, 'tblDoesNotExist0']) {
      expectOpenError(await open('GET', `${O}/${baseId}/tables/${t}`), 404, 'not_found');
      expectOpenError(await open('GET', `${O}/${baseId}/tables/${t}/fields`), 404, 'not_found');
      expectOpenError(await open('GET', `${O}/${baseId}/tables/${t}/records`), 404, 'not_found');
      expectOpenError(await open('GET', `${O}/${baseId}/tables/${t}/records/search?q=title`), 404, 'not_found');
      expectOpenError(await open('POST', `${O}/${baseId}/tables/${t}/records`, { body: { Title: 'misplaced' } }), 404, 'not_found');
    }
    // The right base works.
    expect((await open('GET', `${O}/${base2Id}/tables/${base2TableId}`)).status).toBe(200);
  });

  it('an unknown record, or a record of another table → 404', async () => {
    const [elsewhere] = (await c.request('GET', `/api/v1/tables/${table2Id}/records`)).body.data.items.map((r: any) => r.id);
    for (const r of ['recDoesNotExist00', elsewhere]) {
      expectOpenError(await open('GET', `${recs()}/${r}`), 404, 'not_found');
      expectOpenError(await open('PUT', `${recs()}/${r}`, { body: { Name: 'x' } }), 404, 'not_found');
      expectOpenError(await open('DELETE', `${recs()}/${r}`), 404, 'not_found');
    }
    expect((await open('GET', `${recs(table2Id)}/${elsewhere}`)).status).toBe(200);
  });
});

describe('scopes', () => {
  it('each endpoint needs its scope: without it 403 forbidden, with only it success', async () => {
    const scratch = await v1Create(tableId, [{ Name: 'scope scratch 1' }, { Name: 'scope scratch 2' }]);
    const endpoints: Array<{ scope: string; method: string; url: string; body?: unknown; status: number }> = [
      { scope: 'base:read', method: 'GET', url: O, status: 200 },
      { scope: 'base:read', method: 'GET', url: `${O}/${baseId}`, status: 200 },
      { scope: 'table:read', method: 'GET', url: `${O}/${baseId}/tables`, status: 200 },
      { scope: 'table:read', method: 'GET', url: `${O}/${baseId}/tables/${tableId}`, status: 200 },
      { scope: 'field:read', method: 'GET', url: `${O}/${baseId}/tables/${tableId}/fields`, status: 200 },
      { scope: 'record:read', method: 'GET', url: recs(), status: 200 },
      { scope: 'record:read', method: 'GET', url: `${recs()}/search?q=widget`, status: 200 },
      { scope: 'record:read', method: 'GET', url: `${recs()}/${R.alpha}`, status: 200 },
      { scope: 'record:write', method: 'POST', url: recs(), body: { Name: 'scoped create' }, status: 201 },
      { scope: 'record:write', method: 'PUT', url: `${recs()}/${scratch[0]}`, body: { Name: 'scoped update' }, status: 200 },
      { scope: 'record:write', method: 'DELETE', url: `${recs()}/${scratch[1]}`, status: 200 },
    ];
    const without = new Map<string, string>();
    const only = new Map<string, string>();
    for (const s of new Set(endpoints.map((e) => e.scope))) {
      without.set(s, await issue(ALL_SCOPES.filter((x) => x !== s).join(' ')));
      only.set(s, await issue(s));
    }
    for (const e of endpoints) {
      const refused = await open(e.method, e.url, { t: without.get(e.scope)!, body: e.body });
      expectOpenError(refused, 403, 'forbidden');
    }
    // The refused writes changed nothing.
    const after = await c.request('GET', `/api/v1/tables/${tableId}/records/${scratch[0]}`);
    expect(after.body.data.fields.Name).toBe('scope scratch 1');
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records/${scratch[1]}`)).status).toBe(200);
    for (const e of endpoints) {
      const allowed = await open(e.method, e.url, { t: only.get(e.scope)!, body: e.body });
      expectOk(allowed, e.status);
    }
    // Clean up the record made above.
    const made = (await c.request('GET', `/api/v1/tables/${tableId}/records?filter=${encodeURIComponent(JSON.stringify({ field: 'Name', operator: 'eq', value: 'scoped create' }))}`)).body.data.items;
    for (const r of made) await c.request('DELETE', `/api/v1/tables/${tableId}/records/${r.id}`);
    await c.request('DELETE', `/api/v1/tables/${tableId}/records/${scratch[0]}`);
  });

  it('table:write opens no endpoint: a token holding only it reads nothing', async () => {
    const t = await issue('table:write');
    expectOpenError(await open('GET', O, { t }), 403, 'forbidden');
    expectOpenError(await open('GET', `${O}/${baseId}/tables`, { t }), 403, 'forbidden');
    expectOpenError(await open('POST', recs(), { t, body: { Name: 'x' } }), 403, 'forbidden');
  });
});

describe('record list: pagination, filter, sort', () => {
  const paged = (q = '') => open('GET', `${recs(pagedId)}${q}`);
  const labels = (res: TestResponse) => res.body.data.map((r: any) => Object.values(r.values)[0]);

  it('defaults to page 1 of 20, in creation order, with pagination {page, per_page, total, pages}', async () => {
    const res = await paged();
    expectOk(res);
    expect(res.body.pagination).toEqual({ page: 1, per_page: 20, total: 45, pages: 3 });
    expect(labels(res)).toEqual(Array.from({ length: 20 }, (_, i) => `P${String(i + 1).padStart(2, '0')}`));
    const last = await paged('?page=3');
    expect(last.body.pagination).toEqual({ page: 3, per_page: 20, total: 45, pages: 3 });
    expect(labels(last)).toEqual(['P41', 'P42', 'P43', 'P44', 'P45']);
    const beyond = await paged('?page=4');
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination).toEqual({ page: 4, per_page: 20, total: 45, pages: 3 });
    const seven = await paged('?per_page=7&page=2');
    expect(seven.body.pagination).toEqual({ page: 2, per_page: 7, total: 45, pages: 7 });
    expect(labels(seven)).toEqual(['P08', 'P09', 'P10', 'P11', 'P12', 'P13', 'P14']);
  });

  it('clamps per_page above 200 to 200', async () => {
    for (const q of ['?per_page=500', '?per_page=201', '?per_page=200']) {
      const res = await paged(q);
      expectOk(res);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 200, total: 45, pages: 1 });
      expect(res.body.data.length).toBe(45);
    }
  });

  it('per_page or page that is not a positive integer → 400 bad_request naming it', async () => {
    for (const q of ['per_page=0', 'per_page=-1', 'per_page=abc', 'per_page=1.5', 'per_page=']) {
      const res = await paged(`?${q}`);
      expectOpenError(res, 400, 'bad_request');
      expect(res.body.message).toContain('per_page');
    }
    for (const q of ['page=0', 'page=-2', 'page=x']) {
      const res = await paged(`?${q}`);
      expectOpenError(res, 400, 'bad_request');
      expect(res.body.message).toContain('page');
    }
  });

  it('records are {id, values keyed by field id, created_at, updated_at}', async () => {
    const res = await open('GET', `${recs()}/${R.alpha}`);
    const r = expectOk(res);
    expect(Object.keys(r).sort()).toEqual(['created_at', 'id', 'updated_at', 'values']);
    expect(r.id).toBe(R.alpha);
    expect(r.created_at).toMatch(ISO);
    expect(r.updated_at).toMatch(ISO);
    expect(r.values).toMatchObject({
      [F.Name]: 'Alpha Widget', [F.Notes]: 'The quick brown fox', [F.Email]: 'alice@example.com', [F.Color]: 'Red',
      [F.Tags]: ['urgent', 'home'], [F.Count]: 12345,
    });
    for (const k of Object.keys(r.values)) expect(Object.values(F)).toContain(k);
  });

  it('filters and sorts as /api/v1 does, by field name or id', async () => {
    const q = (filter: unknown, sort?: unknown) =>
      open('GET', `${recs(pagedId)}?per_page=200&filter=${encodeURIComponent(JSON.stringify(filter))}${sort ? `&sort=${encodeURIComponent(JSON.stringify(sort))}` : ''}`);
    const gt40 = await q({ field: 'N', operator: 'gt', value: 40 });
    expect(labels(gt40)).toEqual(['P41', 'P42', 'P43', 'P44', 'P45']);
    expect(gt40.body.pagination).toEqual({ page: 1, per_page: 200, total: 5, pages: 1 });

    const fields = expectOk(await open('GET', `${O}/${baseId}/tables/${pagedId}/fields`));
    const nId = fields.find((f: any) => f.name === 'N').id;
    const byId = await q({ conjunction: 'or', conditions: [{ field: nId, operator: 'lte', value: 2 }, { field: 'Label', operator: 'eq', value: 'P30' }] }, [{ field: nId, direction: 'desc' }]);
    expect(labels(byId)).toEqual(['P30', 'P02', 'P01']);

    const sorted = await open('GET', `${recs(pagedId)}?per_page=3&sort=${encodeURIComponent(JSON.stringify([{ field: 'N', direction: 'desc' }]))}`);
    expect(labels(sorted)).toEqual(['P45', 'P44', 'P43']);

    for (const bad of ['filter={nope', `filter=${encodeURIComponent(JSON.stringify({ field: 'Missing', operator: 'eq', value: 1 }))}`, `filter=${encodeURIComponent(JSON.stringify({ field: 'N', operator: 'contains', value: 'x' }))}`]) {
      const res = await open('GET', `${recs(pagedId)}?${bad}`);
      expectOpenError(res, 400, 'bad_request');
      expect(res.body.message).toContain('filter');
    }
    for (const bad of ['sort=[', `sort=${encodeURIComponent(JSON.stringify([{ field: 'N', direction: 'sideways' }]))}`]) {
      const res = await open('GET', `${recs(pagedId)}?${bad}`);
      expectOpenError(res, 400, 'bad_request');
      expect(res.body.message).toContain('sort');
    }
  });

  it('takes view_id as /api/v1 does: the view\'s filter ANDed, its sort unless sort is given, its visible fields (contract section 13)', async () => {
    const view = (await c.request('POST', `/api/v1/tables/${pagedId}/views`, {
      body: { name: 'Big ones', filter: { field: 'N', operator: 'gt', value: 40 }, sort: [{ field: 'N', direction: 'desc' }], hidden_fields: ['N'] },
    })).body.data;
    const res = await open('GET', `${recs(pagedId)}?view_id=${view.id}`);
    expect(labels(res)).toEqual(['P45', 'P44', 'P43', 'P42', 'P41']);
    expect(Object.keys(res.body.data[0].values)).toHaveLength(1);
    const both = await open('GET', `${recs(pagedId)}?view_id=${view.id}&filter=${encodeURIComponent(JSON.stringify({ field: 'N', operator: 'lt', value: 43 }))}&sort=${encodeURIComponent(JSON.stringify([{ field: 'N' }]))}`);
    expect(labels(both)).toEqual(['P41', 'P42']);
    const other = (await c.request('GET', `/api/v1/tables/${table2Id}/views`)).body.data[0];
    expectOpenError(await open('GET', `${recs(pagedId)}?view_id=${other.id}`), 400, 'bad_request');
    // The export takes the view the same way (contract section 15): its records in its order, its visible fields only.
    const exported = await open('GET', `${O}/${baseId}/tables/${pagedId}/export?view_id=${view.id}`);
    expect(exported.status).toBe(200);
    expect(exported.text.replace(/^\uFEFF/, '').trim().split('\r\n')).toEqual(['Label', 'P45', 'P44', 'P43', 'P42', 'P41']);
  });
});

describe('search', () => {
  const search = (q: string, extra = '') => open('GET', `${recs()}/search?q=${encodeURIComponent(q)}${extra}`);
  const found = async (q: string) => {
    const res = await search(q);
    expectOk(res);
    return res.body.data.map((r: any) => r.id);
  };

  it('matches every term case-insensitively as a substring of some text-like value', async () => {
    expect(await found('widget')).toEqual([R.alpha]);
    expect(await found('WIDGET Fox')).toEqual([R.alpha]);
    expect(await found('fox')).toEqual([R.alpha, R.gamma]);
    expect(await found('fox dog')).toEqual([R.gamma]);
    expect(await found('  dog   fox  ')).toEqual([R.gamma]);
    expect(await found('idge')).toEqual([R.alpha]);
  });

  it('looks in text, long_text, email, url, phone and both selects, but not in numbers', async () => {
    expect(await found('EXAMPLE.COM')).toEqual([R.alpha]); // email
    expect(await found('gadgets.io/shop')).toEqual([R.beta]); // url
    expect(await found('555 0100')).toEqual([R.beta]); // phone
    expect(await found('brown')).toEqual([R.alpha]); // long_text
    expect(await found('green')).toEqual([R.beta]); // single_select
    expect(await found('urgent')).toEqual([R.alpha]); // multi_select
    expect(await found('wor')).toEqual([R.gamma]); // multi_select, substring
    expect(await found('12345')).toEqual([]); // number
    expect(await found('42')).toEqual([]);
    expect(await found('7')).toEqual([]);
  });

  it('terms shorter than three characters work too, alone and with longer ones', async () => {
    expect(await found('ga')).toEqual([R.beta, R.gamma]);
    expect(await found('x')).toEqual([R.alpha, R.gamma]);
    expect(await found('GA dog')).toEqual([R.beta, R.gamma]);
    expect(await found('x dog')).toEqual([R.gamma]);
    expect(await found('q')).toEqual([R.alpha]);
  });

  it('a term never matches across two values', async () => {
    expect(await found('widgetthe')).toEqual([]); // Name | Notes
    expect(await found('urgenthome')).toEqual([]); // two multi_select choices
    expect(await found('redurgent')).toEqual([]); // Color | Tags
    expect(await found('af')).toEqual([]); // "Gamma" | "fox and dog", short term
    expect(await found('tt')).toEqual([R.beta]); // only inside "https"
  });

  it('is case-insensitive beyond ASCII for terms of three characters or more', async () => {
    expect(await found('école')).toEqual([R.ecole]);
    expect(await found('ÉTÉ')).toEqual([R.ecole]);
    expect(await found('école été')).toEqual([R.ecole]);
  });

  it('is case-insensitive beyond ASCII for short terms too', async () => {
    expect(await found('ÇA')).toEqual([R.ecole]); // same case: matches
    expect(await found('ça')).toEqual([R.ecole]);
    expect(await found('éc')).toEqual([R.ecole]);
    expect(await found('ÉT été')).toEqual([R.ecole]);
  });

  it('is paginated like the list', async () => {
    const p1 = await search('fox', '&per_page=1');
    expectOk(p1);
    expect(p1.body.pagination).toEqual({ page: 1, per_page: 1, total: 2, pages: 2 });
    expect(p1.body.data.map((r: any) => r.id)).toEqual([R.alpha]);
    const p2 = await search('fox', '&per_page=1&page=2');
    expect(p2.body.pagination).toEqual({ page: 2, per_page: 1, total: 2, pages: 2 });
    expect(p2.body.data.map((r: any) => r.id)).toEqual([R.gamma]);
    const all = await search('fox');
    expect(all.body.pagination).toEqual({ page: 1, per_page: 20, total: 2, pages: 1 });
    const none = await search('zzzzzz');
    expect(none.body.data).toEqual([]);
    expect(none.body.pagination).toEqual({ page: 1, per_page: 20, total: 0, pages: 0 });
    const clamped = await search('fox', '&per_page=999');
    expect(clamped.body.pagination.per_page).toBe(200);
    expectOpenError(await search('fox', '&per_page=0'), 400, 'bad_request');
    // Records carry values keyed by field id.
    expect(all.body.data[0].values[F.Name]).toBe('Alpha Widget');
  });

  it('q missing or blank → 400 bad_request naming q', async () => {
    for (const url of [`${recs()}/search`, `${recs()}/search?q=`, `${recs()}/search?q=%20%20%20`, `${recs()}/search?q=%09%0A`]) {
      const res = await open('GET', url);
      expectOpenError(res, 400, 'bad_request');
      expect(res.body.message).toContain('q');
    }
  });
});

describe('record writes', () => {
  const stamps = async (recordId: string, t = tableId) => {
    const sql = testSql(c.app);
    const [row] = await sql.rows<{ createdBy: string | null; updatedBy: string | null }>(
      `SELECT _created_by AS "createdBy", _updated_by AS "updatedBy" FROM ${await sql.recordTable(t)} WHERE _id = ?`, [recordId]);
    return row;
  };

  it('creates with values keyed by field id or exact name, bare or wrapped in values: 201 with the record', async () => {
    const bodies = [
      { [F.Name]: 'by id', [F.Count]: 1, [F.Tags]: ['home'] },
      { Name: 'by name', Count: 2, Tags: ['home'] },
      { values: { Name: 'wrapped by name', Count: 3, Tags: ['home'] } },
      { values: { [F.Name]: 'wrapped by id', [F.Count]: 4, [F.Tags]: ['home'] } },
      { Name: 'mixed', [F.Count]: 5, Tags: ['home'] },
    ];
    const made: string[] = [];
    for (const [i, body] of bodies.entries()) {
      const res = await open('POST', recs(), { body });
      const r = expectOk(res, 201);
      expect(Object.keys(r).sort()).toEqual(['created_at', 'id', 'updated_at', 'values']);
      expect(r.id).toMatch(/^rec/);
      expect(r.created_at).toMatch(ISO);
      expect(r.values).toMatchObject({ [F.Count]: i + 1, [F.Tags]: ['home'] });
      expect(r.values[F.Name]).toBe(['by id', 'by name', 'wrapped by name', 'wrapped by id', 'mixed'][i]);
      expect(r.values).not.toHaveProperty('Name');
      made.push(r.id);
      const read = expectOk(await open('GET', `${recs()}/${r.id}`));
      expect(read).toEqual(r);
    }
    for (const id of made) expect((await open('DELETE', `${recs()}/${id}`)).status).toBe(200);
  });

  it('an unknown key → 400 bad_request naming it; an illegal value → 400; nothing is written', async () => {
    const before = (await c.request('GET', `/api/v1/tables/${tableId}/records`)).body.data.total;
    const unknown = await open('POST', recs(), { body: { Name: 'x', Nope: 1 } });
    expectOpenError(unknown, 400, 'bad_request');
    expect(unknown.body.message).toContain('Nope');
    const wrappedUnknown = await open('POST', recs(), { body: { values: { fldNotAField: 'x' } } });
    expectOpenError(wrappedUnknown, 400, 'bad_request');
    expect(wrappedUnknown.body.message).toContain('fldNotAField');
    const caseWrong = await open('POST', recs(), { body: { name: 'lower-case name is not exact' } });
    expectOpenError(caseWrong, 400, 'bad_request');
    for (const body of [{ Count: 'many' }, { Color: 'Purple' }, { Email: 'not-an-email' }, { Tags: 'urgent' }, { Done: 'yes' }, { [F.Count]: { n: 1 } }]) {
      const res = await open('POST', recs(), { body });
      expectOpenError(res, 400, 'bad_request');
    }
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records`)).body.data.total).toBe(before);
    const put = await open('PUT', `${recs()}/${R.gamma}`, { body: { Count: 'seven' } });
    expectOpenError(put, 400, 'bad_request');
    const putUnknown = await open('PUT', `${recs()}/${R.gamma}`, { body: { Ghost: 1 } });
    expectOpenError(putUnknown, 400, 'bad_request');
    expect(putUnknown.body.message).toContain('Ghost');
    expect((await open('GET', `${recs()}/${R.gamma}`)).body.data.values[F.Count]).toBe(7);
  });

  it('updates (200 with the record) and deletes (200 {id, deleted: true}); the application is creator and last editor', async () => {
    const created = expectOk(await open('POST', recs(), { body: { Name: 'lifecycle', Count: 10 } }), 201);
    const id = created.id as string;
    expect(await stamps(id)).toEqual({ createdBy: app.id, updatedBy: app.id });

    // A user edit, then an application edit: the last editor follows.
    const admin = await c.request('GET', '/api/auth/me');
    const userEdit = await c.request('PUT', `/api/v1/tables/${tableId}/records/${id}`, { body: { fields: { Count: 11 } } });
    expect(userEdit.status).toBe(200);
    expect(await stamps(id)).toEqual({ createdBy: app.id, updatedBy: admin.body.data.id });

    const updated = expectOk(await open('PUT', `${recs()}/${id}`, { body: { Name: 'lifecycle 2' } }));
    expect(updated).toMatchObject({ id, created_at: created.created_at });
    expect(updated.values).toMatchObject({ [F.Name]: 'lifecycle 2', [F.Count]: 11 });
    expect(await stamps(id)).toEqual({ createdBy: app.id, updatedBy: app.id });
    const wrapped = expectOk(await open('PUT', `${recs()}/${id}`, { body: { values: { [F.Count]: 12, Color: 'Blue' } } }));
    expect(wrapped.values).toMatchObject({ [F.Name]: 'lifecycle 2', [F.Count]: 12, [F.Color]: 'Blue' });
    const cleared = expectOk(await open('PUT', `${recs()}/${id}`, { body: { Color: null } }));
    expect(cleared.values[F.Color] ?? null).toBeNull();

    // Visible through GraphQL as well.
    const gql = await c.graphql('query($t: ID!, $r: ID!) { record(tableId: $t, id: $r) { id createdBy updatedBy } }', { t: tableId, r: id });
    expect(gql.status).toBe(200);
    expect(gql.body.data.record).toEqual({ id, createdBy: app.id, updatedBy: app.id });

    const del = await open('DELETE', `${recs()}/${id}`);
    expect(expectOk(del)).toEqual({ id, deleted: true });
    expectOpenError(await open('GET', `${recs()}/${id}`), 404, 'not_found');
    expectOpenError(await open('DELETE', `${recs()}/${id}`), 404, 'not_found');
    expectOpenError(await open('PUT', `${recs()}/${id}`, { body: { Name: 'ghost' } }), 404, 'not_found');
  });
});

describe('the generated OpenAPI document', () => {
  const DOC_ID = 'https://table-service.test/open-api.json';
  let doc: any;
  let ajv: Ajv2020;
  const cache = new Map<string, ValidateFunction>();

  function rebase(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map(rebase);
    if (schema && typeof schema === 'object') {
      return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rebase(v)]));
    }
    return schema;
  }
  function conforms(method: string, template: string, res: TestResponse) {
    const key = `${method} ${template} ${res.status}`;
    let v = cache.get(key);
    if (!v) {
      const op = doc.paths[template]?.[method.toLowerCase()];
      expect(op, `the document has ${method} ${template}`).toBeTruthy();
      const schema = op.responses[String(res.status)]?.content?.['application/json']?.schema;
      expect(schema, `the document lists ${key}`).toBeTruthy();
      v = ajv.compile(rebase(schema) as object);
      cache.set(key, v);
    }
    const ok = v(res.body);
    expect(ok, `${key}: ${ajv.errorsText(v.errors)}\n${JSON.stringify(res.body).slice(0, 1000)}`).toBe(true);
  }

  beforeAll(async () => {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
  });

  it('is served at /api/open/v1/openapi.json and passes SwaggerParser.validate', async () => {
    const res = await c.request('GET', '/api/open/v1/openapi.json', { token: null });
    expect(res.status).toBe(200);
    doc = res.body;
    expect(doc.openapi).toMatch(/^3\.1\./);
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
    ajv.addSchema({ $id: DOC_ID, components: doc.components });
    for (const p of ['/api/open/v1/bases', '/api/open/v1/bases/{base_id}', '/api/open/v1/bases/{base_id}/tables', '/api/open/v1/bases/{base_id}/tables/{table_id}',
      '/api/open/v1/bases/{base_id}/tables/{table_id}/fields', '/api/open/v1/bases/{base_id}/tables/{table_id}/records',
      '/api/open/v1/bases/{base_id}/tables/{table_id}/records/search', '/api/open/v1/bases/{base_id}/tables/{table_id}/records/{record_id}',
      '/api/oauth/token', '/api/oauth/apps', '/api/oauth/apps/{app_id}', '/api/oauth/apps/{app_id}/tokens', '/api/oauth/apps/{app_id}/audit']) {
      expect(doc.paths, p).toHaveProperty([p]);
    }
  });

  it('real answers, successes and errors, conform to it', async () => {
    expect(doc, 'the document test ran first').toBeTruthy();
    const P = '/api/open/v1/bases';
    const T = `${P}/{base_id}/tables/{table_id}`;
    const check = async (method: string, template: string, url: string, status: number, opts: { body?: unknown; t?: string | null } = {}) => {
      const res = await c.request(method, url, { token: opts.t === undefined ? token : opts.t, body: opts.body });
      expect(res.status, `${method} ${url}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(status);
      conforms(method, template, res);
      return res;
    };
    const rp = recs();
    await check('GET', P, P, 200);
    await check('GET', P, P, 401, { t: null });
    await check('GET', P, P, 403, { t: c.adminToken });
    await check('GET', `${P}/{base_id}`, `${P}/${baseId}`, 200);
    await check('GET', `${P}/{base_id}`, `${P}/${outsideId}`, 403);
    await check('GET', `${P}/{base_id}`, `${P}/${goneId}`, 404);
    await check('GET', `${P}/{base_id}/tables`, `${P}/${baseId}/tables`, 200);
    await check('GET', T, `${P}/${baseId}/tables/${tableId}`, 200);
    await check('GET', T, `${P}/${baseId}/tables/${base2TableId}`, 404);
    await check('GET', `${T}/fields`, `${P}/${baseId}/tables/${tableId}/fields`, 200);
    await check('GET', `${T}/records`, rp, 200);
    await check('GET', `${T}/records`, `${rp}?per_page=0`, 400);
    await check('GET', `${T}/records/search`, `${rp}/search?q=fox`, 200);
    await check('GET', `${T}/records/search`, `${rp}/search`, 400);
    await check('GET', `${T}/records/{record_id}`, `${rp}/${R.alpha}`, 200);
    await check('GET', `${T}/records/{record_id}`, `${rp}/recNope`, 404);
    const made = await check('POST', `${T}/records`, rp, 201, { body: { Name: 'doc sample', Tags: ['work'] } });
    await check('POST', `${T}/records`, rp, 400, { body: { Unknown: 1 } });
    await check('PUT', `${T}/records/{record_id}`, `${rp}/${made.body.data.id}`, 200, { body: { Count: 3 } });
    await check('DELETE', `${T}/records/{record_id}`, `${rp}/${made.body.data.id}`, 200);
    await check('DELETE', `${T}/records/{record_id}`, `${rp}/${made.body.data.id}`, 404);

    // The OAuth side of the same document.
    const tokenRes = await c.request('POST', '/api/oauth/token', { token: null, body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } });
    conforms('POST', '/api/oauth/token', tokenRes);
    const tokenErr = await c.request('POST', '/api/oauth/token', { token: null, body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: 'os_wrong' } });
    expect(tokenErr.status).toBe(401);
    conforms('POST', '/api/oauth/token', tokenErr);
    await check('GET', '/api/oauth/apps', '/api/oauth/apps', 200, { t: c.adminToken });
    await check('GET', '/api/oauth/apps/{app_id}', `/api/oauth/apps/${app.id}`, 200, { t: c.adminToken });
    await check('GET', '/api/oauth/apps/{app_id}/tokens', `/api/oauth/apps/${app.id}/tokens`, 200, { t: c.adminToken });
    await check('GET', '/api/oauth/apps/{app_id}/audit', `/api/oauth/apps/${app.id}/audit`, 200, { t: c.adminToken });
    await check('POST', '/api/oauth/apps', '/api/oauth/apps', 400, { t: c.adminToken, body: { app_name: '', callback_url: 'x', scopes: [] } });
    await check('GET', '/api/oauth/apps', '/api/oauth/apps', 403, { t: token });
  });
});
