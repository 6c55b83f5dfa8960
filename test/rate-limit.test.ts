// Open API rate limits (spec 1 section 8, contract section 6): sliding 60-second windows per application, one
// for all requests and one for record writes, RateLimit-* headers on every answer and Retry-After on a 429.
// The sliding behaviour is proved on the limiter itself with a fake clock, the rest through the HTTP API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../src/auth/rate-limit.js';
import { makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';

const ALL_SCOPES = ['base:read', 'table:read', 'field:read', 'record:read', 'record:write', 'table:write'];
const INT = /^\d+$/;
const POSITIVE = /^[1-9]\d*$/;

describe('the sliding-window limiter (fake clock)', () => {
  it('allows a request again exactly when the oldest counted one leaves the 60 s window', async () => {
    let t = 1_000_000;
    const limiter = createRateLimiter(() => t);
    const at = (ms: number) => (t = 1_000_000 + ms);

    at(0);
    expect(await limiter.peek('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 3, resetSeconds: 0 });
    expect(await limiter.hit('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 0 });
    at(10_000);
    expect(await limiter.hit('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 1, resetSeconds: 0 });
    at(20_000);
    // The third fills the window; the next one fits when the request made at 0 leaves it, at 60 s.
    expect(await limiter.hit('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 40 });
    at(30_000);
    expect(await limiter.hit('k', 3)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 30 });
    expect(await limiter.peek('k', 3)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 30 });
    at(59_000);
    expect(await limiter.hit('k', 3)).toMatchObject({ allowed: false, resetSeconds: 1 });
    at(59_999);
    expect(await limiter.hit('k', 3)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    at(60_000);
    // Exactly 60 s after the first request: it has left the window, one request fits (refused ones were not counted).
    expect(await limiter.peek('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 1, resetSeconds: 0 });
    expect(await limiter.hit('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 10 });
    expect(await limiter.hit('k', 3)).toMatchObject({ allowed: false, resetSeconds: 10 });
    at(69_999);
    expect(await limiter.hit('k', 3)).toMatchObject({ allowed: false, resetSeconds: 1 });
    at(70_000);
    expect(await limiter.hit('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 10 });
    at(80_000);
    expect(await limiter.hit('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 40 });
    // Two minutes later the window is empty.
    at(200_000);
    expect(await limiter.peek('k', 3)).toEqual({ allowed: true, limit: 3, remaining: 3, resetSeconds: 0 });
  });

  it('is a sliding window, not a fixed one: a burst at the end of a minute still counts at the start of the next', async () => {
    let t = 0;
    const limiter = createRateLimiter(() => t);
    t = 59_000;
    for (let i = 0; i < 5; i++) expect((await limiter.hit('s', 5)).allowed).toBe(true);
    t = 61_000; // a fixed per-minute window would have reset here
    expect(await limiter.hit('s', 5)).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 58 });
    t = 118_999;
    expect((await limiter.hit('s', 5)).allowed).toBe(false);
    t = 119_000;
    for (let i = 0; i < 5; i++) expect((await limiter.hit('s', 5)).allowed).toBe(true);
    expect((await limiter.hit('s', 5)).allowed).toBe(false);
  });

  it('counts exactly the limit, keeps keys apart, and takes a new limit at once', async () => {
    let t = 0;
    const limiter = createRateLimiter(() => t);
    const results = await Promise.all(Array.from({ length: 15 }, async () => (await limiter.hit('a', 10)).allowed));
    expect(results.filter((x) => !x).length).toBe(5);
    expect(results.slice(0, 10).every(Boolean)).toBe(true);
    expect(await limiter.hit('b', 10)).toEqual({ allowed: true, limit: 10, remaining: 9, resetSeconds: 0 });
    expect(await limiter.hit('a', 12)).toEqual({ allowed: true, limit: 12, remaining: 1, resetSeconds: 0 });
    expect(await limiter.hit('a', 12)).toEqual({ allowed: true, limit: 12, remaining: 0, resetSeconds: 60 });
    expect((await limiter.hit('a', 12)).allowed).toBe(false);
    expect(await limiter.hit('a', 5)).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 60 });
    t = 30_000;
    expect(await limiter.peek('a', 5)).toMatchObject({ allowed: false, resetSeconds: 30 });
    t = 60_000;
    expect(await limiter.peek('a', 5)).toEqual({ allowed: true, limit: 5, remaining: 5, resetSeconds: 0 });
  });
});

describe('Open API rate limits over HTTP', () => {
  let c: TestClient;
  let baseId: string;
  let tableId: string;

  beforeAll(async () => {
    c = await makeApp();
    const base = await c.request('POST', '/api/v1/bases', { body: { name: 'Limited base' } });
    baseId = base.body.data.id;
    tableId = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId });
  });
  afterAll(() => c?.close());

  async function newApp(limits: Record<string, number> = {}) {
    const res = await c.request('POST', '/api/oauth/apps', {
      body: { app_name: 'Limited', callback_url: 'https://client.example/cb', scopes: ALL_SCOPES, allowed_bases: [baseId], ...limits },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; client_id: string; client_secret: string; rate_limit_per_minute: number; write_rate_limit_per_minute: number };
  }
  async function issue(app: { client_id: string; client_secret: string }, scope?: string) {
    const res = await c.request('POST', '/api/oauth/token', {
      token: null, body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, ...(scope ? { scope } : {}) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.access_token as string;
  }
  const read = (token: string) => c.request('GET', `/api/open/v1/bases/${baseId}/tables/${tableId}/records`, { token });
  const write = (token: string) => c.request('POST', `/api/open/v1/bases/${baseId}/tables/${tableId}/records`, { token, body: { Name: 'w' } });
  const limitHeaders = (res: TestResponse) => ({
    limit: res.headers.get('ratelimit-limit'),
    remaining: res.headers.get('ratelimit-remaining'),
    reset: res.headers.get('ratelimit-reset'),
  });
  function expectHeaders(res: TestResponse, limit: number, remaining?: number) {
    const h = limitHeaders(res);
    expect(h.limit, `RateLimit-Limit on ${res.status}`).toBe(String(limit));
    expect(h.remaining, `RateLimit-Remaining on ${res.status}`).toMatch(INT);
    expect(h.reset, `RateLimit-Reset on ${res.status}`).toMatch(INT);
    if (remaining !== undefined) expect(Number(h.remaining)).toBe(remaining);
    if (Number(h.remaining) > 0) expect(h.reset).toBe('0');
    else expect(Number(h.reset)).toBeGreaterThanOrEqual(1);
    expect(Number(h.reset)).toBeLessThanOrEqual(60);
  }
  function expect429(res: TestResponse, limit: number) {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ code: 429, message: expect.any(String), error: 'rate_limit', request_id: res.headers.get('x-request-id') });
    const retry = res.headers.get('retry-after');
    expect(retry).toMatch(POSITIVE);
    expect(Number(retry)).toBeLessThanOrEqual(60);
    expectHeaders(res, limit, 0);
    expect(res.headers.get('ratelimit-reset')).toBe(retry);
  }

  it('a fresh application shows the default limits 600 and 300, in its object and in the headers', async () => {
    const app = await newApp();
    expect(app.rate_limit_per_minute).toBe(600);
    expect(app.write_rate_limit_per_minute).toBe(300);
    const token = await issue(app);
    const r = await read(token);
    expect(r.status).toBe(200);
    expect(limitHeaders(r)).toEqual({ limit: '600', remaining: '599', reset: '0' });
    const w = await write(token);
    expect(w.status).toBe(201);
    expect(limitHeaders(w)).toEqual({ limit: '300', remaining: '299', reset: '0' });
    const r2 = await read(token);
    expect(limitHeaders(r2)).toEqual({ limit: '600', remaining: '597', reset: '0' });
  });

  it('the overall limit: of 15 requests against a limit of 10, exactly 5 get 429 rate_limit with Retry-After', async () => {
    const app = await newApp({ rate_limit_per_minute: 10 });
    const token = await issue(app);
    const answers: TestResponse[] = [];
    for (let i = 0; i < 15; i++) answers.push(await read(token));
    expect(answers.map((a) => a.status)).toEqual([...Array(10).fill(200), ...Array(5).fill(429)]);
    answers.slice(0, 10).forEach((a, i) => expectHeaders(a, 10, 9 - i));
    for (const a of answers.slice(10)) expect429(a, 10);
    // Every endpoint of the Open API shares the window, and so does a new token of the same application.
    expect429(await c.request('GET', '/api/open/v1/bases', { token }), 10);
    expect429(await read(await issue(app)), 10);
  });

  it('the record-write limit: of 6 writes against a limit of 4, exactly 2 get 429; the headers describe the write limit', async () => {
    const app = await newApp({ rate_limit_per_minute: 100, write_rate_limit_per_minute: 4 });
    const token = await issue(app);
    const answers: TestResponse[] = [];
    for (let i = 0; i < 6; i++) answers.push(await write(token));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 429, 429]);
    answers.slice(0, 4).forEach((a, i) => expectHeaders(a, 4, 3 - i));
    for (const a of answers.slice(4)) expect429(a, 4);
    // Updates and deletes are record writes too.
    const id = answers[0].body.data.id;
    expect429(await c.request('PUT', `/api/open/v1/bases/${baseId}/tables/${tableId}/records/${id}`, { token, body: { Name: 'x' } }), 4);
    expect429(await c.request('DELETE', `/api/open/v1/bases/${baseId}/tables/${tableId}/records/${id}`, { token }), 4);
    // Reads still pass, and describe the overall limit.
    const r = await read(token);
    expect(r.status).toBe(200);
    expectHeaders(r, 100);
    expect(Number(r.headers.get('ratelimit-remaining'))).toBeLessThan(100 - 4);
  });

  it('writes count against the overall limit too', async () => {
    const app = await newApp({ rate_limit_per_minute: 5, write_rate_limit_per_minute: 100 });
    const token = await issue(app);
    for (let i = 0; i < 3; i++) expect((await write(token)).status).toBe(201);
    const r1 = await read(token);
    expectHeaders(r1, 5, 1);
    const r2 = await read(token);
    expectHeaders(r2, 5, 0);
    expect429(await read(token), 5);
    expect429(await write(token), 5);
  });

  it('RateLimit headers are on every Open API answer of an application, errors included', async () => {
    const app = await newApp({ rate_limit_per_minute: 50, write_rate_limit_per_minute: 20 });
    const token = await issue(app);
    const narrow = await issue(app, 'base:read');
    const P = `/api/open/v1/bases/${baseId}`;
    const calls: Array<[TestResponse, number, number]> = [
      [await c.request('GET', '/api/open/v1/bases', { token }), 200, 50],
      [await c.request('GET', P, { token }), 200, 50],
      [await c.request('GET', `${P}/tables`, { token }), 200, 50],
      [await c.request('GET', `${P}/tables/${tableId}`, { token }), 200, 50],
      [await c.request('GET', `${P}/tables/${tableId}/fields`, { token }), 200, 50],
      [await c.request('GET', `${P}/tables/${tableId}/records/search?q=w`, { token }), 200, 50],
      [await c.request('GET', `${P}/tables/${tableId}/records/recMissing`, { token }), 404, 50],
      [await c.request('GET', `${P}/tables/tblMissing/records`, { token }), 404, 50],
      [await c.request('GET', `/api/open/v1/bases/bseOutside`, { token }), 403, 50],
      [await c.request('GET', `${P}/tables`, { token: narrow }), 403, 50],
      [await c.request('GET', `${P}/tables/${tableId}/records?per_page=0`, { token }), 400, 50],
      [await c.request('POST', `${P}/tables/${tableId}/records`, { token, body: { Name: 'h' } }), 201, 20],
      [await c.request('POST', `${P}/tables/${tableId}/records`, { token, body: { Nope: 1 } }), 400, 20],
      [await c.request('PUT', `${P}/tables/${tableId}/records/recMissing`, { token, body: { Name: 'h' } }), 404, 20],
      [await c.request('DELETE', `${P}/tables/${tableId}/records/recMissing`, { token }), 404, 20],
    ];
    for (const [res, status, limit] of calls) {
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expectHeaders(res, limit);
    }
  });

  it('two applications have separate windows', async () => {
    const a = await newApp({ rate_limit_per_minute: 3 });
    const b = await newApp({ rate_limit_per_minute: 3 });
    const ta = await issue(a);
    const tb = await issue(b);
    for (let i = 0; i < 3; i++) expect((await read(ta)).status).toBe(200);
    expect429(await read(ta), 3);
    const fromB = await read(tb);
    expect(fromB.status).toBe(200);
    expectHeaders(fromB, 3, 2);
    // User API and management calls are not counted against the application.
    expect((await c.request('GET', `/api/v1/tables/${tableId}/records`)).status).toBe(200);
    expect((await c.request('GET', `/api/oauth/apps/${a.id}`)).status).toBe(200);
  });

  it('raising the limit with PUT applies to the next request; lowering it too', async () => {
    const app = await newApp({ rate_limit_per_minute: 10, write_rate_limit_per_minute: 2 });
    const token = await issue(app);
    for (let i = 0; i < 10; i++) expect((await read(token)).status).toBe(200);
    expect429(await read(token), 10);

    const up = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { rate_limit_per_minute: 20 } });
    expect(up.status).toBe(200);
    expect(up.body.data.rate_limit_per_minute).toBe(20);
    const next = await read(token);
    expect(next.status).toBe(200);
    expectHeaders(next, 20, 9);

    const down = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { rate_limit_per_minute: 5 } });
    expect(down.status).toBe(200);
    expect429(await read(token), 5);

    // The write limit the same way.
    await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { rate_limit_per_minute: 100 } });
    expect((await write(token)).status).toBe(201);
    expect((await write(token)).status).toBe(201);
    expect429(await write(token), 2);
    const upW = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { write_rate_limit_per_minute: 3 } });
    expect(upW.body.data.write_rate_limit_per_minute).toBe(3);
    const w = await write(token);
    expect(w.status).toBe(201);
    expectHeaders(w, 3, 0);
  });

  // Contract 8: an application token at /graphql reaches the Open API's operations under the same limits and audit,
  // one window per application across both doors, each record write in a document counting.
  describe('an application token at /graphql', () => {
    const CREATE = 'mutation W($b: ID!, $t: ID!) { openCreateRecord(baseId: $b, tableId: $t, values: {Name: "g"}) { id } }';
    const gqlWrite = (token: string) => c.graphql(CREATE, { b: baseId, t: tableId }, token);

    it('is refused with RATE_LIMITED and 429 past the write limit, and its writes are in the audit log', async () => {
      const app = await newApp({ write_rate_limit_per_minute: 2 });
      const token = await issue(app);
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await gqlWrite(token);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.headers.get('ratelimit-limit')).toBe('2');
        ids.push(res.body.data.openCreateRecord.id);
      }
      const refused = await gqlWrite(token);
      expect(refused.status).toBe(429);
      expect(refused.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', http: { status: 429 } });
      expect(refused.body.data ?? null).toBeNull();
      expect(refused.headers.get('retry-after')).toMatch(POSITIVE);
      // Nothing was written by the refused request.
      const list = await c.request('GET', `/api/open/v1/bases/${baseId}/tables/${tableId}/records?per_page=200`, { token });
      expect(list.body.data.filter((r: { values: Record<string, unknown> }) => Object.values(r.values).includes('g')).length).toBeGreaterThanOrEqual(2);
      const audit = await c.request('GET', `/api/oauth/apps/${app.id}/audit?action=record.create`);
      expect(audit.status).toBe(200);
      expect(audit.body.data.map((e: { record_id: string }) => e.record_id).sort()).toEqual([...ids].sort());
    });

    it('shares one window with the REST door, and counts each write of a document', async () => {
      const app = await newApp({ write_rate_limit_per_minute: 4 });
      const token = await issue(app);
      expect((await write(token)).status).toBe(201);
      // Two aliased writes in one document count twice: 1 + 2 = 3 of 4.
      const two = await c.graphql(`mutation { a: openCreateRecord(baseId: "${baseId}", tableId: "${tableId}", values: {Name: "a"}) { id } b: openCreateRecord(baseId: "${baseId}", tableId: "${tableId}", values: {Name: "b"}) { id } }`, {}, token);
      expect(two.status, JSON.stringify(two.body)).toBe(200);
      expect(two.headers.get('ratelimit-remaining')).toBe('1');
      // A document of two writes no longer fits in the one left: refused whole, nothing written.
      const again = await c.graphql(`mutation { a: openCreateRecord(baseId: "${baseId}", tableId: "${tableId}", values: {Name: "x"}) { id } b: openCreateRecord(baseId: "${baseId}", tableId: "${tableId}", values: {Name: "y"}) { id } }`, {}, token);
      expect(again.status).toBe(429);
      expect((await gqlWrite(token)).status).toBe(200);
      expect429(await write(token), 4);
    });

    it('counts reads against the overall limit across both doors', async () => {
      const app = await newApp({ rate_limit_per_minute: 3 });
      const token = await issue(app);
      expect((await read(token)).status).toBe(200);
      const q = await c.graphql('query R($b: ID!) { openTables(baseId: $b) { id } }', { b: baseId }, token);
      expect(q.status, JSON.stringify(q.body)).toBe(200);
      expect((await read(token)).status).toBe(200);
      const over = await c.graphql('query R($b: ID!) { openTables(baseId: $b) { id } }', { b: baseId }, token);
      expect(over.status).toBe(429);
      expect(over.body.errors[0].extensions.code).toBe('RATE_LIMITED');
      expect429(await read(token), 3);
    });
  });

  it('refuses limits that are not positive integers with 400 bad_request', async () => {
    for (const body of [{ rate_limit_per_minute: 0 }, { rate_limit_per_minute: -5 }, { rate_limit_per_minute: 1.5 }, { write_rate_limit_per_minute: 'many' }, { write_rate_limit_per_minute: 0 }]) {
      const res = await c.request('POST', '/api/oauth/apps', {
        body: { app_name: 'Bad limits', callback_url: 'https://client.example/cb', scopes: ['base:read'], allowed_bases: [baseId], ...body },
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('bad_request');
      expect(res.body.message).toContain(Object.keys(body)[0]);
    }
  });
});
