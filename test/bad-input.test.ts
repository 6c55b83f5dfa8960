// Bad input over /api/v1 (contract sections 1 and 4): each mistake gets its documented 4xx in the v1 envelope
// `{code, msg, error, data: null, request_id, details?}`, with a message that names the problem, and leaves the
// data as it was (every case reads the table back).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';

let c: TestClient;
let tableId: string; // every field type, two records
let otherTableId: string; // link target, one record
let requiredTableId: string; // a required field
let otherRecord: string;
let records: string[] = [];
let adminId: string;
let outsiderId: string;

const enc = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
const CODES: Record<number, string> = {
  400: 'BAD_REQUEST', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 409: 'CONFLICT', 413: 'PAYLOAD_TOO_LARGE',
};

/** Asserts the v1 error envelope with an exact status and code, and a message matching `msg`. */
function expectError(res: TestResponse, status: number, msg?: RegExp | string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const { details, ...rest } = res.body;
  expect(rest).toEqual({ code: status, msg: expect.any(String), error: CODES[status], data: null, request_id: res.headers.get('x-request-id') });
  if (msg !== undefined) {
    if (typeof msg === 'string') expect(res.body.msg).toContain(msg);
    else expect(res.body.msg).toMatch(msg);
  }
  if (details !== undefined) {
    expect(Array.isArray(details)).toBe(true);
    for (const d of details) {
      expect(typeof d.message).toBe('string');
      expect(Object.keys(d).every((k) => ['index', 'field', 'message'].includes(k))).toBe(true);
    }
  }
  return res.body;
}

/** Everything readable about a table: its definition, its fields and its records. */
async function snapshot(id = tableId) {
  const table = (await c.request('GET', `/api/v1/tables/${id}`)).body.data;
  const fields = (await c.request('GET', `/api/v1/tables/${id}/fields?page_size=1000`)).body.data;
  const recs = (await c.request('GET', `/api/v1/tables/${id}/records?page_size=1000`)).body.data;
  return { table, fields, recs };
}
/** Runs `act`, then checks the table reads back exactly as before. */
async function unchanged(act: () => Promise<void>, ids: string[] = [tableId]) {
  const before = await Promise.all(ids.map((id) => snapshot(id)));
  await act();
  const after = await Promise.all(ids.map((id) => snapshot(id)));
  expect(after).toEqual(before);
}

const recordsUrl = () => `/api/v1/tables/${tableId}/records`;
const list = (q: string) => c.request('GET', `${recordsUrl()}?${q}`);

beforeAll(async () => {
  c = await makeApp();
  adminId = (await c.request('GET', '/api/auth/me')).body.data.id;
  outsiderId = (await c.user('Outsider')).id;
  otherTableId = await makeTable(c, [{ name: 'Title', type: 'text' }], { name: 'Other' });
  otherRecord = (await c.request('POST', `/api/v1/tables/${otherTableId}/records`, { body: { fields: { Title: 'o1' } } })).body.data.id;
  tableId = await makeTable(c, [
    { name: 'Text', type: 'text' },
    { name: 'Long', type: 'long_text' },
    { name: 'Num', type: 'number' },
    { name: 'When', type: 'date' },
    { name: 'Pick', type: 'single_select', options: ['a', 'b'] },
    { name: 'Tags', type: 'multi_select', options: ['x', 'y'] },
    { name: 'Done', type: 'checkbox' },
    { name: 'Who', type: 'user' },
    { name: 'Rel', type: 'link', config: { table_id: otherTableId } },
    { name: 'Mail', type: 'email' },
    { name: 'Site', type: 'url' },
    { name: 'Tel', type: 'phone' },
    { name: 'Stars', type: 'rating', config: { max: 3 } },
    { name: 'Created', type: 'created_time' },
    { name: 'Modified', type: 'last_modified_time' },
    { name: 'No', type: 'autonumber' },
  ], { name: 'Everything' });
  const full = {
    Text: 'hello', Long: 'long text', Num: 1.5, When: '2024-01-02', Pick: 'a', Tags: ['x'], Done: true, Who: adminId,
    Rel: [otherRecord], Mail: 'a@example.com', Site: 'https://example.com/', Tel: '+1 555 0100', Stars: 2,
  };
  const res = await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'create', records: [{ fields: full }, { fields: { Text: 'second' } }] } });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  records = res.body.data.items.map((r: any) => r.id);
  requiredTableId = await makeTable(c, [{ name: 'Must', type: 'text', required: true }, { name: 'May', type: 'number' }], { name: 'Required' });
});
afterAll(() => c?.close());

describe('request bodies', () => {
  it('malformed JSON is a 400, never a 500, on every write route', async () => {
    const cases: Array<[string, string]> = [
      ['POST', recordsUrl()],
      ['PUT', `${recordsUrl()}/${records[0]}`],
      ['POST', `${recordsUrl()}/batch`],
      ['POST', '/api/v1/tables'],
      ['PUT', `/api/v1/tables/${tableId}`],
      ['POST', `/api/v1/tables/${tableId}/fields`],
      ['POST', '/api/v1/bases'],
      ['POST', '/api/v1/users'],
    ];
    await unchanged(async () => {
      for (const [method, url] of cases) {
        for (const raw of ['{"fields": ', '{fields: {}}', "{'a': 1}", '[1, 2', 'nul']) {
          const res = await c.request(method, url, { raw, headers: { 'content-type': 'application/json' } });
          expectError(res, 400, /JSON/i);
        }
      }
    });
    const login = await c.request('POST', '/api/auth/login', { token: null, raw: '{"email":', headers: { 'content-type': 'application/json' } });
    expectError(login, 400, /JSON/i);
  });

  it('an unknown property in a body is a 400 naming it', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', recordsUrl(), { fields: { Text: 'x' }, colour: 'red' }, 'colour'],
      ['PUT', `${recordsUrl()}/${records[0]}`, { fields: { Text: 'x' }, id: records[0] }, 'id'],
      ['POST', `${recordsUrl()}/batch`, { action: 'create', records: [{ fields: {} }], atomic: true }, 'atomic'],
      ['POST', '/api/v1/tables', { name: 'Fresh', colour: 'red' }, 'colour'],
      ['POST', '/api/v1/tables', { name: 'Fresh', fields: [{ name: 'A', type: 'text', colour: 'red' }] }, 'fields.0.colour'],
      ['PUT', `/api/v1/tables/${tableId}`, { name: 'Everything', icon: 'x' }, 'icon'],
      ['POST', `/api/v1/tables/${tableId}/fields`, { name: 'New', type: 'text', default: 'x' }, 'default'],
      ['PUT', `/api/v1/tables/${tableId}/fields/fldwhatever`, { hidden: true }, 'hidden'],
      ['POST', '/api/v1/bases', { name: 'B', owner: adminId }, 'owner'],
      ['POST', '/api/v1/users', { email: 'q@test.local', name: 'Q', password: 'password-123', role: 'admin' }, 'role'],
    ];
    await unchanged(async () => {
      for (const [method, url, body, prop] of cases) {
        const res = await c.request(method, url, { body });
        const b = expectError(res, 400, `unknown property "${prop}"`);
        expect(b.details).toEqual([{ field: prop, message: `unknown property "${prop}"` }]);
      }
    });
    const names = (await c.request('GET', '/api/v1/tables?page_size=1000')).body.data.items.map((t: any) => t.name);
    expect(names).not.toContain('Fresh');
    expect((await c.request('GET', '/api/v1/users?page_size=1000')).body.data.items.map((u: any) => u.email)).not.toContain('q@test.local');
  });

  it('an unknown property in a batch item is a 400 naming it and the item; nothing is written', async () => {
    // Its own table: a case the service wrongly accepts must not spoil the shared fixture.
    const t = await makeTable(c, [{ name: 'Text', type: 'text' }]);
    const url = `/api/v1/tables/${t}/records`;
    const r0 = (await c.request('POST', url, { body: { fields: { Text: 'first' } } })).body.data.id;
    const cases: Array<[string, unknown[], string]> = [
      // A typo of "fields" must not create an empty record.
      ['create', [{ fields: { Text: 'ok' } }, { field: { Text: 'typo' } }], 'field'],
      ['create', [{ fields: { Text: 'ok' }, colour: 'red' }], 'colour'],
      ['update', [{ id: r0, fields: { Text: 'changed' }, colour: 'red' }], 'colour'],
      ['update', [{ id: r0, data: { Text: 'changed' } }], 'fields'], // "fields" missing is named, at least
      ['delete', [{ id: r0, force: true }], 'force'],
    ];
    const accepted: string[] = [];
    for (const [action, items, prop] of cases) {
      const before = await snapshot(t);
      const res = await c.request('POST', `${url}/batch`, { body: { action, records: items } });
      if (res.status !== 400) accepted.push(`${action} ${JSON.stringify(items)} → ${res.status}`);
      else {
        expectError(res, 400, prop);
        expect(await snapshot(t)).toEqual(before);
      }
    }
    expect(accepted).toEqual([]);
  });

  it('a missing or mistyped required body property is a 400 naming it', async () => {
    await unchanged(async () => {
      expectError(await c.request('POST', recordsUrl(), { body: {} }), 400, '"fields" is required');
      expectError(await c.request('POST', recordsUrl()), 400, /fields/);
      expectError(await c.request('POST', recordsUrl(), { body: { fields: [1] } }), 400, /fields/);
      expectError(await c.request('POST', recordsUrl(), { body: { fields: 'Text=x' } }), 400, /fields/);
      expectError(await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'upsert', records: [{ fields: {} }] } }), 400, /action/);
      expectError(await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'create' } }), 400, /records/);
      expectError(await c.request('POST', `/api/v1/tables/${tableId}/fields`, { body: { name: 'NoType' } }), 400, /type/);
      expectError(await c.request('POST', `/api/v1/tables/${tableId}/fields`, { body: { name: 'BadType', type: 'colour' } }), 400, /type/);
      expectError(await c.request('POST', `/api/v1/tables/${tableId}/fields`, { body: { name: 'R', type: 'text', required: 'yes' } }), 400, /required/);
      expectError(await c.request('POST', '/api/v1/tables', { body: { description: 'no name' } }), 400, /name/);
      expectError(await c.request('POST', '/api/v1/tables', { body: { name: '' } }), 400, /name/);
      expectError(await c.request('POST', '/api/v1/tables', { body: { name: 5 } }), 400, /name/);
    });
  });
});

describe('record values', () => {
  it('an unknown field name is a 400 naming the field; nothing is written', async () => {
    await unchanged(async () => {
      const created = expectError(await c.request('POST', recordsUrl(), { body: { fields: { Text: 'ok', Nope: 1 } } }), 400, '"Nope"');
      expect(created.details).toEqual([{ field: 'Nope', message: expect.stringContaining('unknown field') }]);
      expectError(await c.request('PUT', `${recordsUrl()}/${records[0]}`, { body: { fields: { Text: 'changed', nope: 1 } } }), 400, '"nope"');
      // Field names are exact: a different case is another (unknown) name.
      expectError(await c.request('POST', recordsUrl(), { body: { fields: { text: 'x' } } }), 400, '"text"');
    });
  });

  const WRONG: Record<string, unknown[]> = {
    Text: [5, true, ['a'], { a: 1 }],
    Long: [5, false, ['a']],
    Num: ['5', true, [1], { n: 1 }],
    When: ['2024-13-01', '2024-02-30', 'yesterday', 20240101, '01/02/2024'],
    Pick: ['c', 1, ['a'], true],
    Tags: ['x', ['z'], ['x', 'x'], [1], { x: true }],
    Done: ['true', 1, 0, 'yes'],
    Who: ['usrnope', 5, ['x']],
    Rel: ['recsomething', ['recnope'], [5], [null]],
    Mail: ['nope', 'a@b', 5, 'two words@example.com'],
    Site: ['example.com', 'javascript:alert(1)', '/relative/path', 5],
    Tel: ['abc', '12', 5551234, 'call me'],
    Stars: [4, -1, 2.5, '2', true],
  };
  for (const [field, values] of Object.entries(WRONG)) {
    it(`wrong values for ${field} are a 400 naming "${field}", on create, update and in a batch`, async () => {
      await unchanged(async () => {
        for (const v of values) {
          const label = `${field} = ${JSON.stringify(v)}`;
          const created = await c.request('POST', recordsUrl(), { body: { fields: { Text: 'new', [field]: v } } });
          expect(created.status, label).toBe(400);
          const b = expectError(created, 400, `"${field}"`);
          expect(b.details, label).toEqual([{ field, message: expect.any(String) }]);
          const updated = await c.request('PUT', `${recordsUrl()}/${records[0]}`, { body: { fields: { [field]: v } } });
          expect(updated.status, label).toBe(400);
          expectError(updated, 400, `"${field}"`);
          const batch = await c.request('POST', `${recordsUrl()}/batch`, {
            body: { action: 'update', records: [{ id: records[1], fields: { Text: 'changed' } }, { id: records[0], fields: { [field]: v } }] },
          });
          expect(batch.status, label).toBe(400);
          expect(expectError(batch, 400, `"${field}"`).details, label).toEqual([{ index: 1, field, message: expect.any(String) }]);
        }
      });
    });
  }

  it('a user who is not a member of the base is refused for a user field', async () => {
    await unchanged(async () => {
      expectError(await c.request('POST', recordsUrl(), { body: { fields: { Who: outsiderId } } }), 400, '"Who"');
    });
  });

  it('a link to a record of another table, or to a record that does not exist, is a 400 naming the field', async () => {
    await unchanged(async () => {
      expectError(await c.request('POST', recordsUrl(), { body: { fields: { Rel: [records[1]] } } }), 400, '"Rel"');
      expectError(await c.request('PUT', `${recordsUrl()}/${records[1]}`, { body: { fields: { Rel: [otherRecord, 'recnope'] } } }), 400, '"Rel"');
    }, [tableId, otherTableId]);
  });

  it('a write to a read-only field is a 400 naming the field, even with a plausible value', async () => {
    const now = new Date().toISOString();
    await unchanged(async () => {
      for (const [field, v] of [['Created', now], ['Modified', now], ['No', 1], ['Created', null], ['No', 99]] as const) {
        const created = expectError(await c.request('POST', recordsUrl(), { body: { fields: { Text: 'x', [field]: v } } }), 400, `"${field}"`);
        expect(created.msg).toMatch(/read-only/);
        expect(created.details).toEqual([{ field, message: expect.stringMatching(/read-only/) }]);
        expectError(await c.request('PUT', `${recordsUrl()}/${records[0]}`, { body: { fields: { [field]: v } } }), 400, `"${field}"`);
      }
    });
  });

  it('a required field refuses a missing value on create and null on update', async () => {
    const url = `/api/v1/tables/${requiredTableId}/records`;
    const ok = await c.request('POST', url, { body: { fields: { Must: 'here' } } });
    expect(ok.status).toBe(201);
    await unchanged(async () => {
      const missing = expectError(await c.request('POST', url, { body: { fields: { May: 1 } } }), 400, '"Must"');
      expect(missing.msg).toMatch(/required/);
      expect(missing.details).toEqual([{ field: 'Must', message: expect.stringMatching(/required/) }]);
      expectError(await c.request('POST', url, { body: { fields: { Must: null } } }), 400, '"Must"');
      expectError(await c.request('POST', url, { body: { fields: { Must: '' } } }), 400, '"Must"');
      expectError(await c.request('PUT', `${url}/${ok.body.data.id}`, { body: { fields: { Must: null } } }), 400, '"Must"');
      const batch = expectError(await c.request('POST', `${url}/batch`, { body: { action: 'create', records: [{ fields: { Must: 'a' } }, { fields: {} }] } }), 400, '"Must"');
      expect(batch.details).toEqual([{ index: 1, field: 'Must', message: expect.stringMatching(/required/) }]);
    }, [requiredTableId]);
    // An update that leaves the required field out is fine.
    const other = await c.request('PUT', `${url}/${ok.body.data.id}`, { body: { fields: { May: 2 } } });
    expect(other.status).toBe(200);
    expect(other.body.data.fields).toEqual({ Must: 'here', May: 2 });
  });
});

describe('filter', () => {
  const bad = async (filter: unknown, msg: RegExp | string) => {
    const res = await list(`filter=${enc(filter)}`);
    const b = expectError(res, 400, msg);
    expect(b.msg).toMatch(/filter/);
    if (b.details) expect(b.details[0].field).toBe('filter');
  };

  it('operators that do not fit the field type are a 400 naming filter, the operator and the field', async () => {
    const cases: Array<[string, string, unknown]> = [
      ['Num', 'contains', '1'], ['Num', 'starts_with', '1'], ['Num', 'has_any', [1]],
      ['Done', 'gt', true], ['Done', 'in', [true]], ['Done', 'contains', 'x'],
      ['Text', 'has_any', ['a']], ['Text', 'has_all', ['a']], ['Text', 'has_none', ['a']],
      ['Pick', 'contains', 'a'], ['Pick', 'gt', 'a'], ['Pick', 'has_any', ['a']],
      ['Tags', 'eq', 'x'], ['Tags', 'neq', 'x'], ['Tags', 'in', ['x']], ['Tags', 'contains', 'x'],
      ['Rel', 'eq', otherRecord], ['Rel', 'in', [otherRecord]], ['Rel', 'contains', 'rec'],
      ['When', 'contains', '2024'], ['When', 'in', ['2024-01-02']],
      ['Stars', 'in', [1]], ['Stars', 'contains', '1'],
      ['Who', 'contains', 'usr'], ['Who', 'gt', 'usr'],
      ['Created', 'contains', '2024'], ['No', 'in', [1]], ['Modified', 'has_any', ['x']],
    ];
    for (const [field, operator, value] of cases) {
      const res = await list(`filter=${enc({ field, operator, value })}`);
      expect(res.status, `${operator} on ${field}`).toBe(400);
      const b = expectError(res, 400, `"${operator}"`);
      expect(b.msg, `${operator} on ${field}`).toMatch(/filter/);
      expect(b.msg, `${operator} on ${field}`).toContain(field);
    }
  });

  it('bad JSON, unknown fields and operators, and values of the wrong type are a 400 naming filter', async () => {
    for (const raw of ['{bad', '{"field":"Text"', 'not json', "[{'field':'Text'}]"]) {
      const res = await list(`filter=${enc(raw)}`);
      expectError(res, 400, /filter/);
      expect(res.body.msg).toMatch(/JSON/);
    }
    await bad(5, /filter/);
    await bad('"Text"', /filter/);
    await bad({ field: 'Nope', operator: 'eq', value: 1 }, /unknown field "Nope"/);
    await bad({ field: 'Text', operator: 'like', value: 'x' }, /unknown operator "like"/);
    await bad({ field: 'Text', operator: 'EQ', value: 'x' }, /unknown operator "EQ"/);
    await bad({ field: 'Text', value: 'x' }, /operator/);
    await bad({ conjunction: 'xor', conditions: [] }, /conjunction/);
    await bad({ conjunction: 'and', conditions: 'Text' }, /conditions/);
    await bad({ conjunction: 'and', conditions: [{ field: 'Nope', operator: 'eq', value: 1 }] }, /unknown field "Nope"/);
    await bad({ field: 'Num', operator: 'eq', value: '5' }, /"Num"/);
    await bad({ field: 'Num', operator: 'gt', value: true }, /"Num"/);
    await bad({ field: 'Done', operator: 'eq', value: 'yes' }, /"Done"/);
    await bad({ field: 'When', operator: 'gt', value: 'not a date' }, /"When"/);
    await bad({ field: 'Created', operator: 'gt', value: 'soon' }, /"Created"/);
    await bad({ field: 'Text', operator: 'in', value: 'a' }, /array/);
    await bad({ field: 'Tags', operator: 'has_any', value: 'x' }, /array/);
    await bad({ field: 'Text', operator: 'eq', value: null }, /value/);
    await bad({ field: 'Text', operator: 'eq' }, /value/);
  });

  it('groups nest up to depth 3; deeper is a 400', async () => {
    const cond = { field: 'Text', operator: 'eq', value: 'hello' };
    const nest = (depth: number): unknown => (depth === 1 ? { conjunction: 'and', conditions: [cond] } : { conjunction: 'or', conditions: [nest(depth - 1)] });
    for (const depth of [1, 2, 3]) {
      const res = await list(`filter=${enc(nest(depth))}`);
      expect(res.status, `depth ${depth}`).toBe(200);
      expect(res.body.data.items.map((r: any) => r.id)).toEqual([records[0]]);
    }
    await bad(nest(4), /deeper|depth|nest/);
    // A bare array counts as the first level too.
    expect((await list(`filter=${enc([nest(2)])}`)).status).toBe(200);
    await bad([nest(3)], /deeper|depth|nest/);
  });
});

describe('sort', () => {
  it('bad JSON, an unknown field, another direction or more than 5 keys is a 400 naming sort', async () => {
    const cases: Array<[unknown, RegExp]> = [
      ['[{', /JSON/],
      ['up', /JSON/],
      [[{ field: 'Nope', direction: 'asc' }], /unknown field "Nope"/],
      [[{ field: 'Text', direction: 'up' }], /direction/],
      [[{ field: 'Text', direction: 'ASC' }], /direction/],
      [[{ field: 'Text', direction: 'asc' }, { field: 'Num', direction: 'desc' }, { field: 'When' }, { field: 'Pick' }, { field: 'Stars' }, { field: 'Mail' }], /5/],
      [5, /sort/],
      [['Text'], /sort/],
    ];
    for (const [sort, msg] of cases) {
      const res = await list(`sort=${enc(sort)}`);
      const b = expectError(res, 400, msg);
      expect(b.msg, JSON.stringify(sort)).toMatch(/sort/);
      if (b.details) expect(b.details[0].field).toBe('sort');
    }
    const five = [{ field: 'Text', direction: 'asc' }, { field: 'Num', direction: 'desc' }, { field: 'When' }, { field: 'Pick' }, { field: 'Stars' }];
    expect((await list(`sort=${enc(five)}`)).status).toBe(200);
  });
});

describe('paging', () => {
  const LISTS = () => [recordsUrl(), '/api/v1/tables', `/api/v1/tables/${tableId}/fields`, '/api/v1/bases', '/api/v1/users'];

  it('page and page_size that are not positive integers are a 400 naming the parameter, on every list', async () => {
    for (const url of LISTS()) {
      for (const [param, value] of [
        ['page', '0'], ['page', '-1'], ['page', 'abc'], ['page', '1.5'], ['page', ''],
        ['page_size', '0'], ['page_size', '-1'], ['page_size', 'abc'], ['page_size', '1.5'], ['page_size', '1e3'],
      ]) {
        const res = await c.request('GET', `${url}?${param}=${value}`);
        expect(res.status, `${url}?${param}=${value}`).toBe(400);
        const b = expectError(res, 400, param);
        if (b.details) expect(b.details[0].field).toBe(param);
      }
    }
  });

  it('page_size above 1000 is clamped to 1000 on every list', async () => {
    for (const url of LISTS()) {
      const res = await c.request('GET', `${url}?page_size=5000`);
      expect(res.status, url).toBe(200);
      expect(res.body.data.page_size, url).toBe(1000);
      expect(res.body.data.page, url).toBe(1);
    }
  });

  it('very large positive integers are still positive integers: page_size is clamped, a far page is empty; never a 500', async () => {
    for (const url of LISTS()) {
      for (const size of ['2147483648', '9007199254740993', '99999999999999999999']) {
        const res = await c.request('GET', `${url}?page_size=${size}`);
        expect(res.status, `${url}?page_size=${size} → ${JSON.stringify(res.body)}`).toBe(200);
        expect(res.body.data.page_size).toBe(1000);
      }
      const far = await c.request('GET', `${url}?page=2147483648`);
      expect(far.status, `${url}?page=2147483648 → ${JSON.stringify(far.body)}`).toBe(200);
      expect(far.body.data.items).toEqual([]);
    }
  });
});

describe('body size', () => {
  it('a JSON body over 10 MiB is a 413 PAYLOAD_TOO_LARGE and writes nothing', async () => {
    const limit = 10 * 1024 * 1024;
    const head = '{"fields":{"Long":"';
    const tail = '"}}';
    const raw = head + 'a'.repeat(limit + 1 - head.length - tail.length) + tail;
    expect(Buffer.byteLength(raw)).toBe(limit + 1);
    await unchanged(async () => {
      const res = await c.request('POST', recordsUrl(), { raw, headers: { 'content-type': 'application/json' } });
      expectError(res, 413);
      const batch = await c.request('POST', `${recordsUrl()}/batch`, {
        body: { action: 'create', records: Array.from({ length: 11 }, () => ({ fields: { Long: 'b'.repeat(1_000_000) } })) },
      });
      expectError(batch, 413);
    });
  });

  it('a body just under 10 MiB is read', async () => {
    const t = await makeTable(c, [{ name: 'Long', type: 'long_text' }]);
    const items = Array.from({ length: 10 }, () => ({ fields: { Long: 'c'.repeat(1_000_000) } }));
    const body = { action: 'create', records: items };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(10 * 1024 * 1024);
    const res = await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body.data.items).toHaveLength(10);
  });

  it('a /graphql body over 25,000,000 bytes is a 413 with a GraphQL error, whether it declares its length or not', async () => {
    const query = '{ me { id } }';
    const over = JSON.stringify({ query, variables: { pad: 'x'.repeat(25_000_000) } });
    // Without Content-Length (as a chunked body comes): read up to the limit, then refused.
    const chunked = await c.request('POST', '/graphql', { raw: over, headers: { 'content-type': 'application/json' } });
    expect(chunked.status).toBe(413);
    expect(chunked.body.errors[0]).toMatchObject({ extensions: { code: 'REQUEST_ENTITY_TOO_LARGE' } });
    // A declared length past the limit is refused before the body is read.
    const declared = await c.request('POST', '/graphql', { raw: '{}', headers: { 'content-type': 'application/json', 'content-length': '25000001' } });
    expect(declared.status).toBe(413);
    const fine = await c.request('POST', '/graphql', { raw: JSON.stringify({ query, variables: { pad: 'x'.repeat(1_000_000) } }), headers: { 'content-type': 'application/json' } });
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
    expect(fine.body.data.me.id).toBeTruthy();
  });
});

describe('ids that do not exist', () => {
  it('unknown table, field and record ids are a 404 naming the id', async () => {
    await unchanged(async () => {
      for (const [method, url, body] of [
        ['GET', '/api/v1/tables/tblnope'], ['PUT', '/api/v1/tables/tblnope', { name: 'x' }], ['DELETE', '/api/v1/tables/tblnope'],
        ['GET', '/api/v1/tables/tblnope/fields'], ['POST', '/api/v1/tables/tblnope/fields', { name: 'x', type: 'text' }],
        ['GET', '/api/v1/tables/tblnope/records'], ['POST', '/api/v1/tables/tblnope/records', { fields: {} }],
        ['GET', '/api/v1/tables/tblnope/records/recnope'],
      ] as Array<[string, string, unknown?]>) {
        expectError(await c.request(method, url, { body }), 404, 'tblnope');
      }
      expectError(await c.request('PUT', `/api/v1/tables/${tableId}/fields/fldnope`, { body: { name: 'x' } }), 404, 'fldnope');
      expectError(await c.request('DELETE', `/api/v1/tables/${tableId}/fields/fldnope`), 404, 'fldnope');
      for (const [method, body] of [['GET'], ['PUT', { fields: { Text: 'x' } }], ['DELETE']] as Array<[string, unknown?]>) {
        expectError(await c.request(method, `${recordsUrl()}/recnope`, { body }), 404, 'recnope');
      }
      expectError(await c.request('GET', '/api/v1/bases/bsenope'), 404, 'bsenope');
      expectError(await c.request('GET', '/api/v1/users/usrnope'), 404, 'usrnope');
    });
  });

  it('a record or field of another table is not found through this table', async () => {
    const otherField = (await c.request('GET', `/api/v1/tables/${otherTableId}/fields`)).body.data.items[0].id;
    await unchanged(async () => {
      expectError(await c.request('GET', `${recordsUrl()}/${otherRecord}`), 404, otherRecord);
      expectError(await c.request('PUT', `${recordsUrl()}/${otherRecord}`, { body: { fields: { Text: 'x' } } }), 404, otherRecord);
      expectError(await c.request('DELETE', `${recordsUrl()}/${otherRecord}`), 404, otherRecord);
      expectError(await c.request('PUT', `/api/v1/tables/${tableId}/fields/${otherField}`, { body: { name: 'Stolen' } }), 404, otherField);
      expectError(await c.request('DELETE', `/api/v1/tables/${tableId}/fields/${otherField}`), 404, otherField);
    }, [tableId, otherTableId]);
  });
});

describe('names', () => {
  it('a duplicate table name in a base is a 409, also on rename; another base may reuse it', async () => {
    const base = (await c.request('POST', '/api/v1/bases', { body: { name: 'Names' } })).body.data.id;
    const first = await makeTable(c, [], { baseId: base, name: 'Orders' });
    const second = await makeTable(c, [], { baseId: base, name: 'Customers' });
    const tablesOf = async () => (await c.request('GET', `/api/v1/tables?base_id=${base}`)).body.data;
    const before = await tablesOf();
    expectError(await c.request('POST', '/api/v1/tables', { body: { base_id: base, name: 'Orders' } }), 409, 'Orders');
    expectError(await c.request('POST', '/api/v1/tables', { body: { base_id: base, name: 'Orders', fields: [{ name: 'A', type: 'text' }] } }), 409, 'Orders');
    expectError(await c.request('PUT', `/api/v1/tables/${second}`, { body: { name: 'Orders' } }), 409, 'Orders');
    expect(await tablesOf()).toEqual(before);
    // Renaming a table to its own name is not a clash.
    expect((await c.request('PUT', `/api/v1/tables/${first}`, { body: { name: 'Orders', description: 'same' } })).status).toBe(200);
    const elsewhere = await c.request('POST', '/api/v1/tables', { body: { name: 'Orders' } });
    expect(elsewhere.status).toBe(201);
  });

  it('a duplicate field name in a table is a 409, also on rename and inside POST /tables', async () => {
    const t = await makeTable(c, [{ name: 'A', type: 'text' }, { name: 'B', type: 'number' }]);
    const fieldsOf = async () => (await c.request('GET', `/api/v1/tables/${t}/fields`)).body.data;
    const before = await fieldsOf();
    expectError(await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'A', type: 'number' } }), 409, '"A"');
    expectError(await c.request('PUT', `/api/v1/tables/${t}/fields/${before.items[1].id}`, { body: { name: 'A' } }), 409, '"A"');
    expect(await fieldsOf()).toEqual(before);
    const res = await c.request('POST', '/api/v1/tables', { body: { name: 'DupFields', fields: [{ name: 'X', type: 'text' }, { name: 'X', type: 'number' }] } });
    expectError(res, 409, '"X"');
    const names = (await c.request('GET', '/api/v1/tables?page_size=1000')).body.data.items.map((x: any) => x.name);
    expect(names).not.toContain('DupFields');
  });
});

describe('batches', () => {
  it('a batch of 0 or of 1001 items is a 400 naming records; nothing is written', async () => {
    await unchanged(async () => {
      for (const action of ['create', 'update', 'delete']) {
        const empty = expectError(await c.request('POST', `${recordsUrl()}/batch`, { body: { action, records: [] } }), 400, 'records');
        expect(empty.msg).toMatch(/1000/);
      }
      const many = Array.from({ length: 1001 }, (_v, i) => ({ fields: { Text: `n${i}` } }));
      expectError(await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'create', records: many } }), 400, 'records');
      const ids = Array.from({ length: 1001 }, () => ({ id: records[0] }));
      expectError(await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'delete', records: ids } }), 400, 'records');
    });
    const exactly = Array.from({ length: 1000 }, (_v, i) => ({ fields: { Text: `m${i}` } }));
    const t = await makeTable(c, [{ name: 'Text', type: 'text' }]);
    const res = await c.request('POST', `/api/v1/tables/${t}/records/batch`, { body: { action: 'create', records: exactly } });
    expect(res.status).toBe(200);
    expect(res.body.data.items).toHaveLength(1000);
  });

  it('a batch with one bad item writes nothing and names the item', async () => {
    await unchanged(async () => {
      const create = await c.request('POST', `${recordsUrl()}/batch`, {
        body: { action: 'create', records: [{ fields: { Text: 'a' } }, { fields: { Text: 'b', Num: 'many' } }, { fields: { Text: 'c' } }] },
      });
      expect(expectError(create, 400, 'records[1]').details).toEqual([{ index: 1, field: 'Num', message: expect.stringContaining('"Num"') }]);

      const update = await c.request('POST', `${recordsUrl()}/batch`, {
        body: { action: 'update', records: [{ id: records[0], fields: { Text: 'changed' } }, { id: records[1], fields: { Stars: 9 } }] },
      });
      expect(expectError(update, 400, 'records[1]').details).toEqual([{ index: 1, field: 'Stars', message: expect.any(String) }]);

      const missing = await c.request('POST', `${recordsUrl()}/batch`, {
        body: { action: 'update', records: [{ id: records[0], fields: { Text: 'changed' } }, { id: 'recnope', fields: { Text: 'x' } }] },
      });
      expect(expectError(missing, 404, 'recnope').details).toEqual([{ index: 1, field: 'id', message: expect.stringContaining('recnope') }]);

      const del = await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'delete', records: [{ id: records[0] }, { id: 'recnope' }] } });
      expect(expectError(del, 404, 'recnope').details).toEqual([{ index: 1, field: 'id', message: expect.stringContaining('recnope') }]);

      const twice = await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'delete', records: [{ id: records[0] }, { id: records[0] }] } });
      expect(expectError(twice, 400, 'records[1]').details).toEqual([{ index: 1, field: 'id', message: expect.stringContaining('twice') }]);

      const notObject = await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'create', records: [{ fields: { Text: 'a' } }, 'x'] } });
      expect(expectError(notObject, 400).details[0].index).toBe(1);

      const noId = await c.request('POST', `${recordsUrl()}/batch`, { body: { action: 'update', records: [{ id: records[0], fields: {} }, { fields: { Text: 'x' } }] } });
      expect(expectError(noId, 400).details[0]).toMatchObject({ index: 1, field: 'id' });

      const badLink = await c.request('POST', `${recordsUrl()}/batch`, {
        body: { action: 'create', records: [{ fields: { Rel: [otherRecord] } }, { fields: { Rel: ['recnope'] } }] },
      });
      expect(expectError(badLink, 400, '"Rel"').details).toEqual([{ index: 1, field: 'Rel', message: expect.stringContaining('recnope') }]);
    }, [tableId, otherTableId]);
  });
});

describe('routes', () => {
  it('an unknown route is a 404 in the v1 envelope', async () => {
    for (const url of ['/api/v1/nothing', '/api/v1/tables/x/y/z/w', '/api/auth/nothing', `/api/v1/tables/${tableId}/rows`]) {
      expectError(await c.request('GET', url), 404);
      expectError(await c.request('GET', url, { token: null }), 404);
    }
  });

  it('a malformed percent-encoding in a path is a client error in the v1 envelope, never a 500', async () => {
    for (const url of ['/api/v1/tables/%ZZ', `${recordsUrl()}/%E0%A4%A`, '/api/v1/bases/%']) {
      const res = await c.request('GET', url);
      expect([400, 404], `${url} → ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
      expectError(res, res.status);
    }
  });

  it('a wrong method on a known route is a 405 in the v1 envelope with Allow', async () => {
    const cases: Array<[string, string, string[]]> = [
      ['PATCH', `/api/v1/tables/${tableId}`, ['GET', 'PUT', 'DELETE']],
      ['DELETE', '/api/v1/tables', ['GET', 'POST']],
      ['PUT', recordsUrl(), ['GET', 'POST']],
      ['DELETE', '/api/v1/bases', ['GET', 'POST']],
      ['POST', '/api/v1/bases/bsex/members', ['GET']],
      ['GET', '/api/auth/login', ['POST']],
      ['DELETE', '/api/auth/me', ['GET']],
      ['POST', '/api/v1/users/usrx', ['GET', 'PUT', 'DELETE']],
    ];
    await unchanged(async () => {
      for (const [method, url, allowed] of cases) {
        const res = await c.request(method, url, { body: method === 'GET' ? undefined : {} });
        expectError(res, 405, method);
        expect(res.headers.get('allow')?.split(/,\s*/).sort(), `${method} ${url}`).toEqual([...allowed].sort());
      }
    });
  });
});
