// Field types of contract section 4: valid and invalid writes and how they read back, each filter operator on
// the types it applies to, field changes on tables that already hold records, and database indexes.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';
import { capturedSql, indexNames, planSorts, planUses, queryPlan } from './database.js';

let c: TestClient;
let baseId: string;
let adminId: string;
let member: { id: string; token: string };
let outsiderId: string;

const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ok(res: TestResponse, status = 200) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}
const create = async (t: string, fields: Record<string, unknown>) => ok(await c.request('POST', `/api/v1/tables/${t}/records`, { body: { fields } }), 201);
const update = async (t: string, id: string, fields: Record<string, unknown>) => ok(await c.request('PUT', `/api/v1/tables/${t}/records/${id}`, { body: { fields } }));
const read = async (t: string, id: string) => ok(await c.request('GET', `/api/v1/tables/${t}/records/${id}`));
const fieldsOf = async (t: string) => (await ok(await c.request('GET', `/api/v1/tables/${t}/fields?page_size=1000`))).items as any[];
const fieldId = async (t: string, name: string) => (await fieldsOf(t)).find((f) => f.name === name)!.id as string;
const table = (fields: unknown[], name?: string) => makeTable(c, fields, { baseId, name });
/** A write that must be refused with 400 naming the field. */
async function refused(t: string, fields: Record<string, unknown>, name: string, id?: string) {
  const res = id
    ? await c.request('PUT', `/api/v1/tables/${t}/records/${id}`, { body: { fields } })
    : await c.request('POST', `/api/v1/tables/${t}/records`, { body: { fields } });
  expect(res.status, `${JSON.stringify(fields)} → ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body).toMatchObject({ code: 400, error: 'BAD_REQUEST', data: null });
  expect(res.body.msg).toContain(`"${name}"`);
}

beforeAll(async () => {
  c = await makeApp();
  adminId = (await c.request('GET', '/api/auth/me')).body.data.id;
  baseId = (await ok(await c.request('POST', '/api/v1/bases', { body: { name: 'Fields' } }), 201)).id;
  member = await c.user('Member');
  outsiderId = (await c.user('Outsider')).id;
  await ok(await c.request('PUT', `/api/v1/bases/${baseId}/members/${member.id}`, { body: { role: 'editor' } }));
});
afterAll(() => c?.close());

describe('field definitions', () => {
  it('a field reads back as {id, table_id, name, type, required, options, config, indexed, computing}', async () => {
    const t = await table([]);
    const f = await ok(await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'Pick', type: 'single_select', options: ['a', 'b'], required: true } }), 201);
    expect(f).toEqual({ id: expect.stringMatching(/^fld/), table_id: t, name: 'Pick', type: 'single_select', required: true, options: ['a', 'b'], config: {}, indexed: false, computing: null });
    const n = await ok(await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'N', type: 'number', config: { precision: 2 }, indexed: true } }), 201);
    expect(n).toMatchObject({ type: 'number', options: null, config: { precision: 2 }, indexed: true, required: false });
    expect((await fieldsOf(t)).map((x) => x.name)).toEqual(['Pick', 'N']);
  });

  it('a field name that is also an Object.prototype key is refused or works like any other', async () => {
    const t = await table([{ name: 'A', type: 'text' }]);
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const res = await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name, type: 'text' } });
      if (res.status === 400) continue;
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const raw = `{"fields":{"A":"a",${JSON.stringify(name)}:"v"}}`;
      const created = await c.request('POST', `/api/v1/tables/${t}/records`, { raw, headers: { 'content-type': 'application/json' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const back = await read(t, created.body.data.id);
      expect(Object.keys(back.fields), name).toContain(name);
      expect(Object.getOwnPropertyDescriptor(back.fields, name)?.value, name).toBe('v');
    }
  });

  it('bad type settings are a 400 naming options or config', async () => {
    const t = await table([]);
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'a', type: 'number', config: { precision: 9 } }, /precision/],
      [{ name: 'a', type: 'number', config: { precision: 1.5 } }, /precision/],
      [{ name: 'a', type: 'number', config: { digits: 2 } }, /digits/],
      [{ name: 'a', type: 'rating', config: { max: 0 } }, /max/],
      [{ name: 'a', type: 'rating', config: { max: 'five' } }, /max/],
      [{ name: 'a', type: 'single_select', options: ['x', 'x'] }, /option/],
      [{ name: 'a', type: 'single_select', options: ['x', ''] }, /option/],
      [{ name: 'a', type: 'text', options: ['x'] }, /option/],
      [{ name: 'a', type: 'link' }, /table_id/],
      [{ name: 'a', type: 'link', config: { table_id: 'tblnope' } }, /tblnope/],
      [{ name: 'a', type: 'created_time', required: true }, /required/],
    ];
    for (const [body, msg] of bad) {
      const res = await c.request('POST', `/api/v1/tables/${t}/fields`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.msg, JSON.stringify(body)).toMatch(msg);
    }
    // A link target must be a table of the same base.
    const foreign = await makeTable(c, [], { name: 'Foreign' });
    const res = await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'L', type: 'link', config: { table_id: foreign } } });
    expect(res.status).toBe(400);
    expect(res.body.msg).toMatch(/config/);
    expect(await fieldsOf(t)).toEqual([]);
  });
});

describe('values by type', () => {
  it('text and long_text take strings; text takes 10,000 characters and long_text 100,000', async () => {
    const t = await table([{ name: 'T', type: 'text' }, { name: 'L', type: 'long_text' }]);
    const big = 'é'.repeat(10_000);
    const huge = 'x\n'.repeat(50_000);
    const r = await create(t, { T: big, L: huge });
    expect(r.fields).toEqual({ T: big, L: huge });
    expect((await read(t, r.id)).fields).toEqual({ T: big, L: huge });
    expect((await update(t, r.id, { T: 'short', L: null })).fields).toEqual({ T: 'short', L: null });
    await refused(t, { T: 1 }, 'T');
    await refused(t, { L: ['a'] }, 'L');
  });

  it('number rounds to config.precision and otherwise keeps the value as given', async () => {
    const t = await table([
      { name: 'Raw', type: 'number' }, { name: 'P2', type: 'number', config: { precision: 2 } }, { name: 'P0', type: 'number', config: { precision: 0 } },
    ]);
    const r = await create(t, { Raw: 1.23456789, P2: 3.14159, P0: 2.6 });
    expect(r.fields).toEqual({ Raw: 1.23456789, P2: 3.14, P0: 3 });
    expect((await update(t, r.id, { Raw: -0.5, P2: 10, P0: -1.4 })).fields).toEqual({ Raw: -0.5, P2: 10, P0: -1 });
    expect((await update(t, r.id, { Raw: 0 })).fields.Raw).toBe(0);
    expect((await update(t, r.id, { Raw: 1e21 })).fields.Raw).toBe(1e21);
    for (const v of ['1', true, [1], {}]) await refused(t, { Raw: v }, 'Raw', r.id);
    expect((await read(t, r.id)).fields).toEqual({ Raw: 1e21, P2: 10, P0: -1 });
  });

  it('date keeps YYYY-MM-DD and normalises a date-time to UTC with Z', async () => {
    const t = await table([{ name: 'D', type: 'date' }]);
    const cases: Array<[string, string]> = [
      ['2024-03-05', '2024-03-05'],
      ['2024-02-29', '2024-02-29'],
      ['2024-03-05T10:00:00Z', '2024-03-05T10:00:00.000Z'],
      ['2024-03-05T10:00:00.123Z', '2024-03-05T10:00:00.123Z'],
      ['2024-03-05T10:00:00+02:00', '2024-03-05T08:00:00.000Z'],
      ['2024-03-05T23:30:00-05:00', '2024-03-06T04:30:00.000Z'],
      ['2024-12-31T23:59:59.999+00:00', '2024-12-31T23:59:59.999Z'],
    ];
    for (const [input, stored] of cases) {
      const r = await create(t, { D: input });
      expect(r.fields.D, input).toBe(stored);
      expect((await read(t, r.id)).fields.D, input).toBe(stored);
    }
    for (const v of ['2023-02-29', '2024-13-01', '2024-1-5', 'March 5', '', 20240305]) {
      const res = await c.request('POST', `/api/v1/tables/${t}/records`, { body: { fields: { D: v } } });
      // An empty string may count as clearing; anything else that is not a date is refused.
      if (v === '') expect([201, 400]).toContain(res.status);
      else {
        expect(res.status, String(v)).toBe(400);
        expect(res.body.msg).toContain('"D"');
      }
    }
  });

  it('single_select takes one of its options; multi_select distinct options, in the order given', async () => {
    const t = await table([{ name: 'S', type: 'single_select', options: ['a', 'b'] }, { name: 'M', type: 'multi_select', options: ['x', 'y', 'z'] }]);
    const r = await create(t, { S: 'b', M: ['z', 'x'] });
    expect(r.fields).toEqual({ S: 'b', M: ['z', 'x'] });
    expect((await update(t, r.id, { S: null, M: null })).fields).toEqual({ S: null, M: null });
    expect((await update(t, r.id, { M: [] })).fields.M).toBeNull();
    for (const v of ['c', 'A', 1, ['a']]) await refused(t, { S: v }, 'S', r.id);
    for (const v of ['x', ['w'], ['x', 'x'], [1], ['X']]) await refused(t, { M: v }, 'M', r.id);
    expect((await read(t, r.id)).fields).toEqual({ S: null, M: null });
  });

  it('checkbox is a boolean; an empty cell reads false', async () => {
    const t = await table([{ name: 'C', type: 'checkbox' }, { name: 'X', type: 'text' }]);
    expect((await create(t, { X: 'x' })).fields.C).toBe(false);
    const r = await create(t, { C: true });
    expect(r.fields.C).toBe(true);
    expect((await update(t, r.id, { C: false })).fields.C).toBe(false);
    expect((await update(t, r.id, { C: true })).fields.C).toBe(true);
    expect((await update(t, r.id, { C: null })).fields.C).toBe(false);
    for (const v of ['true', 1, 0, 'x']) await refused(t, { C: v }, 'C', r.id);
  });

  it('user takes the id of a member of the base only', async () => {
    const t = await table([{ name: 'U', type: 'user' }]);
    expect((await create(t, { U: member.id })).fields.U).toBe(member.id);
    expect((await create(t, { U: adminId })).fields.U).toBe(adminId); // the creator of the base is its owner
    await refused(t, { U: outsiderId }, 'U');
    await refused(t, { U: 'usrnope' }, 'U');
    await refused(t, { U: [member.id] }, 'U');
    // An editor writes it as well, and the value is the same for every reader.
    const res = await c.request('POST', `/api/v1/tables/${t}/records`, { token: member.token, body: { fields: { U: member.id } } });
    expect(res.status).toBe(201);
    expect(res.body.data.fields.U).toBe(member.id);
  });

  it('email, url and phone are validated strings', async () => {
    const t = await table([{ name: 'E', type: 'email' }, { name: 'W', type: 'url' }, { name: 'P', type: 'phone' }]);
    const good = { E: 'ann.lee+tag@example.co.uk', W: 'https://example.com/a?b=c#d', P: '+1 (555) 010-0100' };
    expect((await create(t, good)).fields).toEqual(good);
    expect((await create(t, { W: 'http://localhost:8080/x', P: '020 7946 0000' })).fields).toMatchObject({ W: 'http://localhost:8080/x', P: '020 7946 0000' });
    for (const v of ['ann', 'ann@', '@example.com', 'a b@example.com', 5]) await refused(t, { E: v }, 'E');
    for (const v of ['example.com', 'javascript:alert(1)', '//example.com', 'http://', 5]) await refused(t, { W: v }, 'W');
    for (const v of ['call me', '12', '555-CALL', 5551234]) await refused(t, { P: v }, 'P');
  });

  it('rating is an integer from 0 to config.max, default 5', async () => {
    const t = await table([{ name: 'R', type: 'rating' }, { name: 'R10', type: 'rating', config: { max: 10 } }]);
    expect((await fieldsOf(t)).map((f) => f.config)).toEqual([{ max: 5 }, { max: 10 }]);
    const r = await create(t, { R: 5, R10: 10 });
    expect(r.fields).toEqual({ R: 5, R10: 10 });
    expect((await update(t, r.id, { R: 0, R10: 7 })).fields).toEqual({ R: 0, R10: 7 });
    for (const v of [6, -1, 2.5, '3', true]) await refused(t, { R: v }, 'R', r.id);
    await refused(t, { R10: 11 }, 'R10', r.id);
    expect((await read(t, r.id)).fields).toEqual({ R: 0, R10: 7 });
  });

  it('created_time, last_modified_time and autonumber are set by the service', async () => {
    const t = await table([{ name: 'T', type: 'text' }, { name: 'Created', type: 'created_time' }, { name: 'Modified', type: 'last_modified_time' }, { name: 'No', type: 'autonumber' }]);
    const a = await create(t, { T: 'a' });
    expect(a.fields.Created).toBe(a.created_at);
    expect(a.fields.Modified).toBe(a.created_at);
    expect(a.fields.Created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const b = await create(t, { T: 'b' });
    const d = await create(t, { T: 'd' });
    expect(b.fields.No).toBe(a.fields.No + 1);
    expect(d.fields.No).toBe(b.fields.No + 1);
    // last_modified_time equals created_time until the first change.
    expect((await read(t, a.id)).fields.Modified).toBe(a.fields.Created);
    await sleep(5);
    const changed = await update(t, a.id, { T: 'a2' });
    expect(changed.fields.Created).toBe(a.fields.Created);
    expect(changed.fields.Modified).toBe(changed.updated_at);
    expect(changed.fields.Modified > changed.fields.Created).toBe(true);
    expect(changed.fields.No).toBe(a.fields.No);
    // An autonumber is never reused.
    await ok(await c.request('DELETE', `/api/v1/tables/${t}/records/${d.id}`));
    const e = await create(t, { T: 'e' });
    expect(e.fields.No).toBeGreaterThan(d.fields.No);
    for (const f of ['Created', 'Modified', 'No']) {
      await refused(t, { [f]: f === 'No' ? 1 : a.created_at }, f);
      await refused(t, { [f]: null }, f, a.id);
    }
  });
});

describe('link fields', () => {
  let target: string;
  let source: string;
  let p: string[];

  beforeAll(async () => {
    target = await table([{ name: 'Name', type: 'text' }], 'People');
    p = [];
    for (const n of ['p1', 'p2', 'p3']) p.push((await create(target, { Name: n })).id);
    source = await table([{ name: 'Title', type: 'text' }, { name: 'Who', type: 'link', config: { table_id: target } }], 'Tasks');
  });

  it('holds record ids of config.table_id in the order written; an unknown id is a 400', async () => {
    const f = (await fieldsOf(source)).find((x) => x.name === 'Who');
    expect(f).toMatchObject({ type: 'link', config: { table_id: target }, options: null });
    const r = await create(source, { Title: 't', Who: [p[1], p[0]] });
    expect(r.fields.Who).toEqual([p[1], p[0]]);
    expect((await update(source, r.id, { Who: [p[2]] })).fields.Who).toEqual([p[2]]);
    await refused(source, { Who: ['recnope'] }, 'Who', r.id);
    await refused(source, { Who: [p[0], 'recnope'] }, 'Who', r.id);
    await refused(source, { Who: [r.id] }, 'Who', r.id); // a record of the source table, not of the target
    await refused(source, { Who: p[0] }, 'Who', r.id);
    await refused(source, { Who: [p[0], p[0]] }, 'Who', r.id);
    expect((await read(source, r.id)).fields.Who).toEqual([p[2]]);
  });

  it('an empty link reads null, like every other empty field', async () => {
    const r = await create(source, { Title: 'none' });
    expect(r.fields.Who).toBeNull();
    const set = await create(source, { Title: 'some', Who: [p[0]] });
    expect((await update(source, set.id, { Who: null })).fields.Who).toBeNull();
    expect((await update(source, set.id, { Who: [p[0]] })).fields.Who).toEqual([p[0]]);
    expect((await update(source, set.id, { Who: [] })).fields.Who).toBeNull();
  });

  it('deleting a linked record removes it from the links', async () => {
    const extra = (await create(target, { Name: 'temp' })).id;
    const r = await create(source, { Title: 'links', Who: [p[0], extra, p[1]] });
    await ok(await c.request('DELETE', `/api/v1/tables/${target}/records/${extra}`));
    expect((await read(source, r.id)).fields.Who).toEqual([p[0], p[1]]);
    const hits = await ok(await c.request('GET', `/api/v1/tables/${source}/records?filter=${enc({ field: 'Who', operator: 'has_any', value: [extra] })}`));
    expect(hits.total).toBe(0);
    // Batch delete as well.
    const only = (await create(target, { Name: 'only' })).id;
    const r2 = await create(source, { Title: 'only', Who: [only] });
    await ok(await c.request('POST', `/api/v1/tables/${target}/records/batch`, { body: { action: 'delete', records: [{ id: only }] } }));
    expect((await read(source, r2.id)).fields.Who).toBeNull();
  });

  it('deleting the linked table removes the link field', async () => {
    const tgt = await table([{ name: 'N', type: 'text' }]);
    const src = await table([{ name: 'T', type: 'text' }, { name: 'L', type: 'link', config: { table_id: tgt } }]);
    const x = await create(tgt, { N: 'x' });
    const r = await create(src, { T: 'r', L: [x.id] });
    await ok(await c.request('DELETE', `/api/v1/tables/${tgt}`));
    expect((await fieldsOf(src)).map((f) => f.name)).toEqual(['T']);
    expect((await read(src, r.id)).fields).toEqual({ T: 'r' });
    await refused(src, { L: [] }, 'L', r.id);
  });
});

describe('filter operators on every type', () => {
  let t: string;
  let people: string[];
  const ids: Record<string, string> = {};
  const rows: Record<string, any> = {};

  beforeAll(async () => {
    const ppl = await table([{ name: 'Name', type: 'text' }]);
    people = [];
    for (const n of ['p1', 'p2', 'p3']) people.push((await create(ppl, { Name: n })).id);
    t = await table([
      { name: 'L', type: 'text' },
      { name: 'T', type: 'text' },
      { name: 'LT', type: 'long_text' },
      { name: 'N', type: 'number' },
      { name: 'D', type: 'date' },
      { name: 'S', type: 'single_select', options: ['a', 'b'] },
      { name: 'M', type: 'multi_select', options: ['x', 'y'] },
      { name: 'C', type: 'checkbox' },
      { name: 'U', type: 'user' },
      { name: 'K', type: 'link', config: { table_id: ppl } },
      { name: 'E', type: 'email' },
      { name: 'W', type: 'url' },
      { name: 'P', type: 'phone' },
      { name: 'R', type: 'rating' },
      { name: 'Created', type: 'created_time' },
      { name: 'Modified', type: 'last_modified_time' },
      { name: 'No', type: 'autonumber' },
    ], 'Ops');
    const data: Record<string, Record<string, unknown>> = {
      r1: { T: 'apple pie', LT: 'Long Apple story', N: 10, D: '2024-01-10', S: 'a', M: ['x', 'y'], C: true, U: member.id, K: [people[0]], E: 'ann@example.com', W: 'https://apple.com', P: '+1 555 0100', R: 4 },
      r2: { T: 'banana', LT: 'nothing', N: 2.5, D: '2024-03-01T12:00:00Z', S: 'b', M: ['y'], C: false, U: adminId, K: [people[1], people[2]], E: 'bob@test.org', W: 'http://banana.org/x', P: '020 7946 0000', R: 1 },
      r3: { T: 'cherry', N: -1, D: '2023-12-31', R: 0 },
      r4: {},
    };
    for (const [label, fields] of Object.entries(data)) {
      const r = await create(t, { L: label, ...fields });
      ids[label] = r.id;
      rows[label] = r;
      await sleep(3); // distinct creation times
    }
  });

  const labels = async (filter: unknown) => {
    const res = await c.request('GET', `/api/v1/tables/${t}/records?filter=${enc(filter)}`);
    expect(res.status, `${JSON.stringify(filter)} → ${JSON.stringify(res.body)}`).toBe(200);
    return res.body.data.items.map((r: any) => r.fields.L);
  };
  const cases = (): Array<[string, string, unknown, string[]]> => [
    // text
    ['T', 'eq', 'banana', ['r2']], ['T', 'neq', 'banana', ['r1', 'r3', 'r4']],
    ['T', 'gt', 'b', ['r2', 'r3']], ['T', 'gte', 'banana', ['r2', 'r3']], ['T', 'lt', 'banana', ['r1']], ['T', 'lte', 'banana', ['r1', 'r2']],
    ['T', 'contains', 'AN', ['r2']], ['T', 'not_contains', 'an', ['r1', 'r3', 'r4']], ['T', 'starts_with', 'CH', ['r3']], ['T', 'ends_with', 'PIE', ['r1']],
    ['T', 'contains', '%', []], ['T', 'contains', '_', []], ['T', 'in', ['banana', 'cherry'], ['r2', 'r3']], ['T', 'not_in', ['banana'], ['r1', 'r3', 'r4']],
    ['T', 'is_empty', undefined, ['r4']], ['T', 'is_not_empty', undefined, ['r1', 'r2', 'r3']],
    // long_text
    ['LT', 'contains', 'apple', ['r1']], ['LT', 'eq', 'nothing', ['r2']], ['LT', 'starts_with', 'long', ['r1']], ['LT', 'gt', 'M', ['r2']],
    ['LT', 'in', ['nothing'], ['r2']], ['LT', 'is_empty', undefined, ['r3', 'r4']],
    // number
    ['N', 'eq', 10, ['r1']], ['N', 'neq', 10, ['r2', 'r3', 'r4']], ['N', 'gt', 0, ['r1', 'r2']], ['N', 'gte', 2.5, ['r1', 'r2']],
    ['N', 'lt', 0, ['r3']], ['N', 'lte', 2.5, ['r2', 'r3']], ['N', 'in', [10, -1], ['r1', 'r3']], ['N', 'not_in', [10], ['r2', 'r3', 'r4']],
    ['N', 'is_empty', undefined, ['r4']], ['N', 'is_not_empty', undefined, ['r1', 'r2', 'r3']],
    // date
    ['D', 'eq', '2024-01-10', ['r1']], ['D', 'neq', '2024-01-10', ['r2', 'r3', 'r4']], ['D', 'gt', '2024-01-01', ['r1', 'r2']],
    ['D', 'gte', '2024-03-01', ['r2']], ['D', 'lt', '2024-01-01', ['r3']], ['D', 'lte', '2024-01-10', ['r1', 'r3']],
    ['D', 'gt', '2024-02-01T00:00:00+01:00', ['r2']], ['D', 'eq', '2024-03-01T13:00:00+01:00', ['r2']],
    ['D', 'is_empty', undefined, ['r4']], ['D', 'is_not_empty', undefined, ['r1', 'r2', 'r3']],
    // single_select
    ['S', 'eq', 'a', ['r1']], ['S', 'neq', 'a', ['r2', 'r3', 'r4']], ['S', 'in', ['a', 'b'], ['r1', 'r2']], ['S', 'not_in', ['a'], ['r2', 'r3', 'r4']],
    ['S', 'is_empty', undefined, ['r3', 'r4']], ['S', 'is_not_empty', undefined, ['r1', 'r2']],
    // multi_select
    ['M', 'has_any', ['x'], ['r1']], ['M', 'has_any', ['y'], ['r1', 'r2']], ['M', 'has_all', ['x', 'y'], ['r1']], ['M', 'has_all', ['y'], ['r1', 'r2']],
    ['M', 'has_none', ['x'], ['r2', 'r3', 'r4']], ['M', 'is_empty', undefined, ['r3', 'r4']], ['M', 'is_not_empty', undefined, ['r1', 'r2']],
    // checkbox
    ['C', 'eq', true, ['r1']], ['C', 'eq', false, ['r2', 'r3', 'r4']], ['C', 'neq', true, ['r2', 'r3', 'r4']], ['C', 'neq', false, ['r1']],
    ['C', 'is_not_empty', undefined, ['r1']],
    // user
    ['U', 'eq', member.id, ['r1']], ['U', 'neq', member.id, ['r2', 'r3', 'r4']], ['U', 'in', [member.id, adminId], ['r1', 'r2']],
    ['U', 'not_in', [member.id], ['r2', 'r3', 'r4']], ['U', 'has_any', [member.id], ['r1']], ['U', 'has_any', [member.id, adminId], ['r1', 'r2']],
    ['U', 'has_all', [member.id], ['r1']], ['U', 'has_all', [member.id, adminId], []], ['U', 'has_none', [member.id], ['r2', 'r3', 'r4']],
    ['U', 'is_empty', undefined, ['r3', 'r4']], ['U', 'is_not_empty', undefined, ['r1', 'r2']],
    // link
    ['K', 'has_any', [people[0]], ['r1']], ['K', 'has_any', [people[2], people[0]], ['r1', 'r2']], ['K', 'has_all', [people[1], people[2]], ['r2']],
    ['K', 'has_all', [people[0], people[1]], []], ['K', 'has_none', [people[0]], ['r2', 'r3', 'r4']],
    ['K', 'is_empty', undefined, ['r3', 'r4']], ['K', 'is_not_empty', undefined, ['r1', 'r2']],
    // email, url, phone
    ['E', 'eq', 'bob@test.org', ['r2']], ['E', 'contains', 'EXAMPLE', ['r1']], ['E', 'ends_with', '.org', ['r2']], ['E', 'starts_with', 'ann', ['r1']],
    ['E', 'gt', 'b', ['r2']], ['E', 'in', ['ann@example.com'], ['r1']], ['E', 'not_contains', 'example', ['r2', 'r3', 'r4']], ['E', 'is_empty', undefined, ['r3', 'r4']],
    ['W', 'starts_with', 'HTTPS', ['r1']], ['W', 'contains', 'banana', ['r2']], ['W', 'neq', 'https://apple.com', ['r2', 'r3', 'r4']], ['W', 'is_not_empty', undefined, ['r1', 'r2']],
    ['P', 'starts_with', '+1', ['r1']], ['P', 'contains', '7946', ['r2']], ['P', 'ends_with', '0000', ['r2']], ['P', 'not_in', ['020 7946 0000'], ['r1', 'r3', 'r4']],
    ['P', 'lt', '1', ['r1', 'r2']], ['P', 'is_empty', undefined, ['r3', 'r4']],
    // rating
    ['R', 'eq', 4, ['r1']], ['R', 'neq', 4, ['r2', 'r3', 'r4']], ['R', 'gt', 0, ['r1', 'r2']], ['R', 'gte', 0, ['r1', 'r2', 'r3']],
    ['R', 'lt', 1, ['r3']], ['R', 'lte', 1, ['r2', 'r3']], ['R', 'is_empty', undefined, ['r4']], ['R', 'is_not_empty', undefined, ['r1', 'r2', 'r3']],
    // created_time, last_modified_time, autonumber
    ['Created', 'eq', rows.r2.created_at, ['r2']], ['Created', 'neq', rows.r2.created_at, ['r1', 'r3', 'r4']],
    ['Created', 'gt', rows.r2.created_at, ['r3', 'r4']], ['Created', 'gte', rows.r2.created_at, ['r2', 'r3', 'r4']],
    ['Created', 'lt', rows.r2.created_at, ['r1']], ['Created', 'lte', rows.r2.created_at, ['r1', 'r2']], ['Created', 'gt', '2000-01-01', ['r1', 'r2', 'r3', 'r4']],
    ['Created', 'is_empty', undefined, []], ['Created', 'is_not_empty', undefined, ['r1', 'r2', 'r3', 'r4']],
    ['Modified', 'lte', rows.r3.created_at, ['r1', 'r2', 'r3']], ['Modified', 'eq', rows.r4.created_at, ['r4']], ['Modified', 'is_empty', undefined, []],
    ['No', 'eq', rows.r1.fields.No, ['r1']], ['No', 'neq', rows.r1.fields.No, ['r2', 'r3', 'r4']], ['No', 'gt', rows.r2.fields.No, ['r3', 'r4']],
    ['No', 'gte', rows.r2.fields.No, ['r2', 'r3', 'r4']], ['No', 'lt', rows.r2.fields.No, ['r1']], ['No', 'lte', rows.r2.fields.No, ['r1', 'r2']],
    ['No', 'is_empty', undefined, []], ['No', 'is_not_empty', undefined, ['r1', 'r2', 'r3', 'r4']],
  ];

  it('each operator gives the right records on each type it applies to', async () => {
    const failures: string[] = [];
    for (const [field, operator, value, want] of cases()) {
      const cond = value === undefined ? { field, operator } : { field, operator, value };
      const got = await labels(cond);
      if (JSON.stringify(got) !== JSON.stringify(want)) failures.push(`${field} ${operator} ${JSON.stringify(value)}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
    expect(failures).toEqual([]);
  });

  it('a field may be named by its id; conjunctions combine conditions', async () => {
    const nId = await fieldId(t, 'N');
    expect(await labels({ field: nId, operator: 'gt', value: 0 })).toEqual(['r1', 'r2']);
    expect(await labels({ conjunction: 'and', conditions: [{ field: 'N', operator: 'gt', value: 0 }, { field: 'S', operator: 'eq', value: 'b' }] })).toEqual(['r2']);
    expect(await labels({ conjunction: 'or', conditions: [{ field: 'N', operator: 'lt', value: 0 }, { field: 'C', operator: 'eq', value: true }] })).toEqual(['r1', 'r3']);
    expect(await labels([{ field: 'M', operator: 'has_any', value: ['y'] }, { field: 'R', operator: 'lt', value: 2 }])).toEqual(['r2']);
    expect(await labels({ conjunction: 'and', conditions: [] })).toEqual(['r1', 'r2', 'r3', 'r4']);
  });

  it('last_modified_time follows changes', async () => {
    await sleep(5);
    const changed = await update(t, ids.r1, { N: 11 });
    expect(await labels({ field: 'Modified', operator: 'gt', value: rows.r4.created_at })).toEqual(['r1']);
    expect(await labels({ field: 'Modified', operator: 'eq', value: changed.updated_at })).toEqual(['r1']);
    await update(t, ids.r1, { N: 10 });
  });

  it('sorts put empty values last in both directions, ties in creation order', async () => {
    const sorted = async (field: string, direction: string) => {
      const res = await c.request('GET', `/api/v1/tables/${t}/records?sort=${enc([{ field, direction }])}`);
      expect(res.status).toBe(200);
      return res.body.data.items.map((r: any) => r.fields.L);
    };
    expect(await sorted('D', 'asc')).toEqual(['r3', 'r1', 'r2', 'r4']);
    expect(await sorted('D', 'desc')).toEqual(['r2', 'r1', 'r3', 'r4']);
    expect(await sorted('T', 'desc')).toEqual(['r3', 'r2', 'r1', 'r4']);
    expect(await sorted('S', 'desc')).toEqual(['r2', 'r1', 'r3', 'r4']);
    expect(await sorted('R', 'asc')).toEqual(['r3', 'r2', 'r1', 'r4']);
    expect(await sorted('Created', 'desc')).toEqual(['r4', 'r3', 'r2', 'r1']);
    expect(await sorted('No', 'desc')).toEqual(['r4', 'r3', 'r2', 'r1']);
  });
});

describe('changing fields of a table that holds records', () => {
  let t: string;
  let r: Record<string, string>;

  beforeAll(async () => {
    t = await table([{ name: 'Label', type: 'text' }, { name: 'Val', type: 'text' }], 'Changing');
    r = {};
    for (const [label, val] of [['num', '42'], ['spaced', ' 7.5 '], ['word', 'abc'], ['empty', null]] as const) {
      r[label] = (await create(t, { Label: label, Val: val })).id;
    }
  });
  const values = async (name: string) => {
    const items = (await ok(await c.request('GET', `/api/v1/tables/${t}/records`))).items;
    return Object.fromEntries(items.map((x: any) => [x.fields.Label, x.fields[name]]));
  };

  it('a new field reads null (checkbox false) on existing records', async () => {
    const before = await ok(await c.request('GET', `/api/v1/tables/${t}/records/${r.num}`));
    for (const [name, type, extra, empty] of [
      ['NewText', 'text', {}, null], ['NewNum', 'number', {}, null], ['NewCheck', 'checkbox', {}, false],
      ['NewMulti', 'multi_select', { options: ['a'] }, null], ['NewDate', 'date', {}, null], ['NewRating', 'rating', {}, null],
    ] as const) {
      await ok(await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name, type, ...extra } }), 201);
      expect(Object.values(await values(name)), name).toEqual([empty, empty, empty, empty]);
    }
    const after = await read(t, r.num);
    expect(after.updated_at).toBe(before.updated_at);
    for (const name of ['NewText', 'NewNum', 'NewCheck', 'NewMulti', 'NewDate', 'NewRating']) {
      await ok(await c.request('DELETE', `/api/v1/tables/${t}/fields/${await fieldId(t, name)}`));
    }
  });

  it('a new required field is allowed while records have it empty; they stay until written', async () => {
    const f = await ok(await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'Must', type: 'text', required: true } }), 201);
    expect(Object.values(await values('Must'))).toEqual([null, null, null, null]);
    // A write that leaves it alone still works; clearing it or creating without it does not.
    expect((await update(t, r.word, { Label: 'word' })).fields.Must).toBeNull();
    await refused(t, { Label: 'new' }, 'Must');
    await refused(t, { Must: null }, 'Must', r.word);
    await ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${f.id}`, { body: { required: false } }));
    await create(t, { Label: 'tmp' }).then((x) => c.request('DELETE', `/api/v1/tables/${t}/records/${x.id}`));
    await ok(await c.request('DELETE', `/api/v1/tables/${t}/fields/${f.id}`));
  });

  it('rename keeps the values', async () => {
    const id = await fieldId(t, 'Val');
    const renamed = await ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${id}`, { body: { name: 'Value' } }));
    expect(renamed).toMatchObject({ id, name: 'Value', type: 'text' });
    expect(await values('Value')).toEqual({ num: '42', spaced: ' 7.5 ', word: 'abc', empty: null });
    expect((await read(t, r.num)).fields).not.toHaveProperty('Val');
    await refused(t, { Val: 'x' }, 'Val', r.num);
    await ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${id}`, { body: { name: 'Val' } }));
  });

  it('text → number converts numeric strings and empties the rest; number → text gives the digits', async () => {
    const src = await table([{ name: 'Label', type: 'text' }, { name: 'Val', type: 'text' }]);
    const ids: Record<string, string> = {};
    for (const [label, val] of [['int', '42'], ['spaced', ' 7.5 '], ['neg', '-3'], ['word', 'abc'], ['mixed', '12abc'], ['empty', null]] as const) {
      ids[label] = (await create(src, { Label: label, Val: val })).id;
    }
    const id = await fieldId(src, 'Val');
    const toNumber = await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${id}`, { body: { type: 'number' } }));
    expect(toNumber).toMatchObject({ id, name: 'Val', type: 'number', options: null });
    const vals = async () => Object.fromEntries((await ok(await c.request('GET', `/api/v1/tables/${src}/records`))).items.map((x: any) => [x.fields.Label, x.fields.Val]));
    expect(await vals()).toEqual({ int: 42, spaced: 7.5, neg: -3, word: null, mixed: null, empty: null });
    // The converted values are real numbers: filters and writes treat them as such.
    const gt = await ok(await c.request('GET', `/api/v1/tables/${src}/records?filter=${enc({ field: 'Val', operator: 'gt', value: 7 })}`));
    expect(gt.items.map((x: any) => x.fields.Label)).toEqual(['int', 'spaced']);
    await refused(src, { Val: 'abc' }, 'Val', ids.word);

    await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${id}`, { body: { type: 'text' } }));
    expect(await vals()).toEqual({ int: '42', spaced: '7.5', neg: '-3', word: null, mixed: null, empty: null });
    await refused(src, { Val: 5 }, 'Val', ids.word);
  });

  it('number precision set later rounds the stored values', async () => {
    const src = await table([{ name: 'N', type: 'number' }]);
    const a = await create(src, { N: 1.23456 });
    const id = await fieldId(src, 'N');
    await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${id}`, { body: { config: { precision: 2 } } }));
    expect((await read(src, a.id)).fields.N).toBe(1.23);
  });

  it('text → single_select keeps values that are options and empties the rest', async () => {
    const src = await table([{ name: 'Label', type: 'text' }, { name: 'Val', type: 'text' }]);
    for (const [label, val] of [['a', 'red'], ['b', 'blue'], ['c', 'purple'], ['d', null]] as const) await create(src, { Label: label, Val: val });
    const id = await fieldId(src, 'Val');
    const changed = await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${id}`, { body: { type: 'single_select', options: ['red', 'blue'] } }));
    expect(changed).toMatchObject({ type: 'single_select', options: ['red', 'blue'] });
    const items = (await ok(await c.request('GET', `/api/v1/tables/${src}/records`))).items;
    expect(items.map((x: any) => x.fields.Val)).toEqual(['red', 'blue', null, null]);
    const res = await c.request('PUT', `/api/v1/tables/${src}/fields/${id}`, { body: { type: 'single_select', options: 'red' } });
    expect(res.status).toBe(400);
    expect(res.body.msg).toMatch(/options/);
  });

  it('removing a multi_select option removes it from every record', async () => {
    const src = await table([{ name: 'Label', type: 'text' }, { name: 'Tags', type: 'multi_select', options: ['x', 'y', 'z'] }]);
    for (const [label, tags] of [['xz', ['x', 'z']], ['z', ['z']], ['y', ['y']], ['none', null]] as const) await create(src, { Label: label, Tags: tags });
    const id = await fieldId(src, 'Tags');
    await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${id}`, { body: { options: ['x', 'y'] } }));
    const items = (await ok(await c.request('GET', `/api/v1/tables/${src}/records`))).items;
    expect(Object.fromEntries(items.map((x: any) => [x.fields.Label, x.fields.Tags]))).toEqual({ xz: ['x'], z: null, y: ['y'], none: null });
    await refused(src, { Tags: ['z'] }, 'Tags');
    const hits = await ok(await c.request('GET', `/api/v1/tables/${src}/records?filter=${enc({ field: 'Tags', operator: 'is_empty' })}`));
    expect(hits.items.map((x: any) => x.fields.Label)).toEqual(['z', 'none']);
  });

  it('other type changes never leave a value that breaks the new type', async () => {
    const src = await table([{ name: 'Label', type: 'text' }, { name: 'V', type: 'text' }, { name: 'N', type: 'number' }]);
    for (const [label, v, n] of [['date', '2024-01-02', 7.6], ['mail', 'a@example.com', -2], ['yes', 'yes', 3]] as const) await create(src, { Label: label, V: v, N: n });
    const vId = await fieldId(src, 'V');
    const nId = await fieldId(src, 'N');
    const snap = async (name: string) => (await ok(await c.request('GET', `/api/v1/tables/${src}/records`))).items.map((x: any) => x.fields[name]);

    await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${vId}`, { body: { type: 'date' } }));
    expect(await snap('V')).toEqual(['2024-01-02', null, null]);
    await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${vId}`, { body: { type: 'email' } }));
    expect(await snap('V')).toEqual([null, null, null]);

    await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${nId}`, { body: { type: 'rating', config: { max: 5 } } }));
    const ratings = await snap('N');
    for (const v of ratings) expect(v === null || (Number.isInteger(v) && v >= 0 && v <= 5), String(v)).toBe(true);
    await ok(await c.request('PUT', `/api/v1/tables/${src}/fields/${nId}`, { body: { type: 'checkbox' } }));
    for (const v of await snap('N')) expect(typeof v).toBe('boolean');
    // Every record still reads and takes a valid write of the new type.
    const first = (await ok(await c.request('GET', `/api/v1/tables/${src}/records`))).items[0];
    expect((await update(src, first.id, { V: 'b@example.com', N: true })).fields).toMatchObject({ V: 'b@example.com', N: true });
  });

  it('deleting a field removes it and its data', async () => {
    const src = await table([{ name: 'Keep', type: 'text' }, { name: 'Drop', type: 'number' }]);
    const a = await create(src, { Keep: 'k', Drop: 1 });
    const id = await fieldId(src, 'Drop');
    expect(await ok(await c.request('DELETE', `/api/v1/tables/${src}/fields/${id}`))).toEqual({ id, deleted: true });
    expect((await read(src, a.id)).fields).toEqual({ Keep: 'k' });
    await refused(src, { Drop: 1 }, 'Drop', a.id);
    const filter = await c.request('GET', `/api/v1/tables/${src}/records?filter=${enc({ field: 'Drop', operator: 'eq', value: 1 })}`);
    expect(filter.status).toBe(400);
    // A new field of the same name starts empty.
    await ok(await c.request('POST', `/api/v1/tables/${src}/fields`, { body: { name: 'Drop', type: 'number' } }), 201);
    expect((await read(src, a.id)).fields).toEqual({ Keep: 'k', Drop: null });
  });
});

describe('indexes', () => {
  const indexesOf = (tableId: string) => indexNames(c.app, tableId);

  /** The SQL the record list runs for a request, captured from the database connections. */
  async function listSql(url: string): Promise<string> {
    const sent = await capturedSql(c.app, async () => expect((await c.request('GET', url)).status).toBe(200));
    const sql = sent.filter((s) => /^SELECT t\._seq/.test(s));
    expect(sql.length, 'the list statement was sent').toBeGreaterThan(0);
    return sql[sql.length - 1];
  }
  const plan = (sql: string, params: unknown[]) => queryPlan(c.app, sql, params);

  it('indexed: true creates ix_<fieldId>, which the list query uses for an eq filter; turning it off drops it', async () => {
    const t = await table([{ name: 'Code', type: 'text', indexed: true }, { name: 'Other', type: 'text' }]);
    const code = await fieldId(t, 'Code');
    expect(await indexesOf(t)).toContain(`ix_${code}`);
    const recs = Array.from({ length: 200 }, (_v, i) => ({ fields: { Code: `c${i}`, Other: `o${i}` } }));
    await ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body: { action: 'create', records: recs } }));

    const url = `/api/v1/tables/${t}/records?filter=${enc({ field: 'Code', operator: 'eq', value: 'c7' })}`;
    const sql = await listSql(url);
    expect(sql).toContain(`rt_${t}`);
    expect(sql).toContain(`c_${code}`);
    expect(planUses(await plan(sql, ['c7', 20, 0]), `ix_${code}`)).toBe(true);
    expect((await ok(await c.request('GET', url))).items.map((r: any) => r.fields.Code)).toEqual(['c7']);

    const off = await ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${code}`, { body: { indexed: false } }));
    expect(off.indexed).toBe(false);
    expect(await indexesOf(t)).not.toContain(`ix_${code}`);
    expect(planUses(await plan(sql, ['c7', 20, 0]), `ix_${code}`)).toBe(false);
    expect((await ok(await c.request('GET', url))).items.map((r: any) => r.fields.Code)).toEqual(['c7']);

    const on = await ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${code}`, { body: { indexed: true } }));
    expect(on.indexed).toBe(true);
    expect(await indexesOf(t)).toContain(`ix_${code}`);
    expect(planUses(await plan(sql, ['c7', 20, 0]), `ix_${code}`)).toBe(true);
  });

  it('indexing a field later, and keeping the index through a rename and a type change', async () => {
    const t = await table([{ name: 'N', type: 'text' }]);
    await ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body: { action: 'create', records: [{ fields: { N: '1' } }, { fields: { N: '2' } }] } }));
    const id = await fieldId(t, 'N');
    expect(await indexesOf(t)).not.toContain(`ix_${id}`);
    await ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${id}`, { body: { indexed: true } }));
    expect(await indexesOf(t)).toContain(`ix_${id}`);
    await ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${id}`, { body: { name: 'Num' } }));
    expect(await indexesOf(t)).toContain(`ix_${id}`);
    const retyped = await ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${id}`, { body: { type: 'number' } }));
    expect(retyped.indexed).toBe(true);
    expect(await indexesOf(t)).toContain(`ix_${id}`);
    const sql = await listSql(`/api/v1/tables/${t}/records?filter=${enc({ field: 'Num', operator: 'eq', value: 2 })}`);
    expect(planUses(await plan(sql, [2, 20, 0]), `ix_${id}`)).toBe(true);
    await ok(await c.request('DELETE', `/api/v1/tables/${t}/fields/${id}`));
    expect(await indexesOf(t)).not.toContain(`ix_${id}`);
  });

  it('a sort on an indexed field uses its index both ways, empty values last and ties in creation order (contract: "filters and sorts on the field use one")', async () => {
    const t = await table([{ name: 'N', type: 'number', indexed: true }, { name: 'T', type: 'text', indexed: true }, { name: 'I', type: 'number' }]);
    // Every 7th record is empty; N and T repeat, so ties are many.
    const recs = Array.from({ length: 210 }, (_v, i) => ({ fields: i % 7 === 3 ? { I: i } : { N: (i * 37) % 20, T: `t${(i * 37) % 20}`, I: i } }));
    await ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body: { action: 'create', records: recs } }));
    for (const name of ['N', 'T']) {
      const id = await fieldId(t, name);
      for (const direction of ['asc', 'desc'] as const) {
        const url = `/api/v1/tables/${t}/records?page_size=100&sort=${enc([{ field: name, direction }])}`;
        const p = await plan(await listSql(url), [20, 0]);
        expect(p, p).toContain(id);
        expect(planSorts(p), p).toBe(false);
        const got: Array<{ v: unknown; i: number }> = [];
        for (let page = 1; page <= 3; page++) {
          const items = (await ok(await c.request('GET', `${url}&page=${page}`))).items;
          got.push(...items.map((r: any) => ({ v: r.fields[name] ?? null, i: r.fields.I })));
        }
        const key = (v: unknown) => (typeof v === 'string' ? Number(v.slice(1)) : (v as number));
        const sign = direction === 'asc' ? 1 : -1;
        const want = recs.map((r, i) => ({ v: (r.fields as any)[name] ?? null, i })).sort((a, b) =>
          a.v === null || b.v === null ? (a.v === null ? 1 : 0) - (b.v === null ? 1 : 0) || a.i - b.i
            : sign * (typeof a.v === 'string' ? (a.v < (b.v as string) ? -1 : a.v > (b.v as string) ? 1 : 0) : key(a.v) - key(b.v)) || a.i - b.i);
        expect(got, `${name} ${direction}`).toEqual(want);
      }
    }
  });
});
