// The /graphql fast path (src/graphql/fast-path.ts) answers a repeated query exactly as yoga does, and leaves to yoga
// everything it does not take: errors, refused variables, mutations, other Accept values.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';

let c: TestClient;
let tableId: string;
beforeAll(async () => {
  c = await makeApp();
  tableId = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }]);
  const res = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, { body: { action: 'create', records: [{ fields: { Name: 'a', N: 1 } }, { fields: { Name: 'b', N: 2 } }] } });
  expect(res.status).toBe(200);
});
afterAll(() => c.close());

const served = () => c.app.graphqlFastPath.served();
const LIST = 'query List($t: ID!, $size: Int) { records(tableId: $t, pageSize: $size) { items { id fields createdAt updatedAt } total page pageSize } }';
const post = (body: unknown, headers: Record<string, string> = {}) => c.request('POST', '/graphql', { body, headers });
const answer = (res: TestResponse) => ({ status: res.status, type: res.headers.get('content-type'), body: res.body, cors: res.headers.get('access-control-allow-origin'), credentials: res.headers.get('access-control-allow-credentials'), vary: res.headers.get('vary') });

describe('the /graphql fast path', () => {
  it('answers a query yoga has run, the same way, with CORS headers as yoga sends them', async () => {
    const body = { query: LIST, variables: { t: tableId, size: 10 }, operationName: 'List' };
    const before = served();
    const first = await post(body, { origin: 'https://app.example' });
    expect(served()).toBe(before);
    const second = await post(body, { origin: 'https://app.example' });
    expect(served()).toBe(before + 1);
    expect(answer(second)).toEqual(answer(first));
    expect(second.body.data.records.items.map((r: any) => r.fields.Name)).toEqual(['a', 'b']);
    expect(first.headers.get('access-control-allow-origin')).toBe('https://app.example');
    // Without Origin and with the Accept values that mean plain JSON.
    for (const accept of [undefined, '*/*', 'application/json']) {
      const res = await post(body, accept ? { accept } : {});
      expect(answer(res)).toEqual({ ...answer(first), cors: null, credentials: null, vary: null });
    }
    expect(served()).toBe(before + 4);
  });

  it('leaves errors, refused variables, other Accept values and mutations to yoga', async () => {
    const body = { query: LIST, variables: { t: tableId, size: 10 }, operationName: 'List' };
    await post(body);
    const before = served();
    const missing = { ...body, variables: { t: 'tblmissing0000000000', size: 10 } };
    const notFound = [await post(missing), await post(missing)];
    expect(notFound.map((r) => r.status)).toEqual([404, 404]);
    expect(notFound[1].body).toEqual(notFound[0].body);
    expect(notFound[0].body.errors[0].extensions.code).toBe('NOT_FOUND');
    const refused = await post({ ...body, variables: { t: tableId, size: 'ten' } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].message).toMatch(/size/);
    const typed = await post(body, { accept: 'application/graphql-response+json' });
    expect(typed.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    const create = { query: `mutation($t: ID!) { createRecord(tableId: $t, fields: { Name: "m" }) { id } }`, variables: { t: tableId } };
    for (let i = 0; i < 2; i++) expect((await post(create)).status, 'mutation').toBe(200);
    expect(served()).toBe(before);
    // Another user's read of the table is refused the same way on the second run as on the first.
    const stranger = await c.user('Stranger');
    const refusedTwice = [await c.graphql(LIST, { t: tableId, size: 10 }, stranger.token), await c.graphql(LIST, { t: tableId, size: 10 }, stranger.token)];
    expect(refusedTwice.map((r) => r.status)).toEqual([403, 403]);
    // A bad token makes the context fail: yoga's 401, twice.
    const badToken = [await c.graphql(LIST, { t: tableId, size: 10 }, 'not.a.jwt'), await c.graphql(LIST, { t: tableId, size: 10 }, 'not.a.jwt')];
    expect(badToken.map((r) => [r.status, r.body.errors?.[0]?.extensions?.code])).toEqual([[401, 'UNAUTHORIZED'], [401, 'UNAUTHORIZED']]);
    expect(served()).toBe(before);
  });
});
