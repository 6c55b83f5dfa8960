// Users, login and bases (contract sections 2 and 3): login and its throttle, me and logout, user administration,
// default bases, bases and members, and what deleting a base takes with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';
import { ENGINE, testSql } from './database.js';

let c: TestClient;
let adminId: string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ok(res: TestResponse, status = 200) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}
function expectError(res: TestResponse, status: number, error: string, msg?: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const { details: _details, ...rest } = res.body;
  expect(rest).toEqual({ code: status, msg: expect.any(String), error, data: null, request_id: res.headers.get('x-request-id') });
  if (msg) expect(res.body.msg).toMatch(msg);
  return res.body;
}
const login = (email: string, password: string) => c.request('POST', '/api/auth/login', { token: null, body: { email, password } });
const newUser = async (body: Record<string, unknown>) => ok(await c.request('POST', '/api/v1/users', { body }), 201);

beforeAll(async () => {
  c = await makeApp();
  adminId = (await c.request('GET', '/api/auth/me')).body.data.id;
});
afterAll(() => c?.close());

describe('login', () => {
  it('answers a Bearer user token with the user', async () => {
    const u = await c.user('Login');
    const res = await login(u.email, 'password-123');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      code: 0, msg: 'success',
      data: { token: expect.any(String), token_type: 'Bearer', expires_in: 86400, user: { id: u.id, email: u.email, name: 'Login', is_admin: false } },
    });
    const token = res.body.data.token as string;
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: u.id, token_type: 'user' });
    expect(claims.exp - claims.iat).toBe(86400);
    expect(JSON.stringify(res.body)).not.toMatch(/password/i);
    // The email is matched without regard to case or surrounding spaces.
    expect((await login(`  ${u.email.toUpperCase()} `, 'password-123')).status).toBe(200);
  });

  it('a wrong email and a wrong password give the same 401', async () => {
    const u = await c.user('Same');
    const wrongPassword = await login(u.email, 'password-124');
    const wrongEmail = await login('nobody@test.local', 'password-123');
    expectError(wrongPassword, 401, 'UNAUTHORIZED');
    expectError(wrongEmail, 401, 'UNAUTHORIZED');
    const strip = (b: any) => ({ ...b, request_id: undefined });
    expect(strip(wrongEmail.body)).toEqual(strip(wrongPassword.body));
    expect([...wrongEmail.headers.keys()].filter((h) => h !== 'x-request-id').sort())
      .toEqual([...wrongPassword.headers.keys()].filter((h) => h !== 'x-request-id').sort());
    expectError(await login(u.email, ''), 401, 'UNAUTHORIZED');
  });

  it('a body without email or password is a 400 naming it', async () => {
    expectError(await c.request('POST', '/api/auth/login', { token: null, body: { email: 'a@test.local' } }), 400, 'BAD_REQUEST', /password/);
    expectError(await c.request('POST', '/api/auth/login', { token: null, body: { password: 'x' } }), 400, 'BAD_REQUEST', /email/);
    expectError(await c.request('POST', '/api/auth/login', { token: null, body: { email: 5, password: 'x' } }), 400, 'BAD_REQUEST', /email/);
  });

  it('repeated failures for one email are slowed down with 429 and Retry-After; other emails are not', async () => {
    const u = await c.user('Throttled');
    const other = await c.user('Bystander');
    let limited: TestResponse | undefined;
    for (let i = 0; i < 10 && !limited; i++) {
      const res = await login(u.email, `wrong-${i}`);
      if (res.status === 429) limited = res;
      else expectError(res, 401, 'UNAUTHORIZED');
    }
    expect(limited, 'a 429 within 10 failed attempts').toBeDefined();
    expectError(limited!, 429, 'RATE_LIMITED');
    const retry = limited!.headers.get('retry-after');
    expect(retry).toMatch(/^\d+$/);
    expect(Number(retry)).toBeGreaterThanOrEqual(1);
    // While slowed down, even the right password waits; another email logs in at once.
    expectError(await login(u.email, 'password-123'), 429, 'RATE_LIMITED');
    expect((await login(other.email, 'password-123')).status).toBe(200);
    // After the wait, the right password works again.
    await sleep(Number(retry) * 1000 + 100);
    expect((await login(u.email, 'password-123')).status).toBe(200);
  });
});

describe('me and logout', () => {
  it('GET /api/auth/me answers the user behind the token', async () => {
    const u = await c.user('Me');
    const me = await ok(await c.request('GET', '/api/auth/me', { token: u.token }));
    expect(me).toMatchObject({ id: u.id, email: u.email, name: 'Me', is_admin: false, default_base_id: u.defaultBaseId });
    expect(JSON.stringify(me)).not.toMatch(/password/i);
    expect((await ok(await c.request('GET', '/api/auth/me'))).is_admin).toBe(true);
    expectError(await c.request('GET', '/api/auth/me', { token: null }), 401, 'UNAUTHORIZED');
  });

  it('logout revokes that token only', async () => {
    const u = await c.user('Leaving');
    const second = await c.login(u.email, 'password-123');
    expect(await ok(await c.request('POST', '/api/auth/logout', { token: u.token }))).toEqual({ logged_out: true });
    expectError(await c.request('GET', '/api/auth/me', { token: u.token }), 401, 'UNAUTHORIZED');
    expectError(await c.request('GET', '/api/v1/bases', { token: u.token }), 401, 'UNAUTHORIZED');
    expectError(await c.request('POST', '/api/auth/logout', { token: u.token }), 401, 'UNAUTHORIZED');
    expect((await c.request('GET', '/api/auth/me', { token: second })).status).toBe(200);
    expectError(await c.request('POST', '/api/auth/logout', { token: null }), 401, 'UNAUTHORIZED');
  });
});

describe('user administration', () => {
  it('creates, lists, reads, changes and deletes users', async () => {
    const created = await newUser({ email: 'Carol@Test.Local', name: 'Carol', password: 'password-123' });
    expect(created).toEqual({
      id: expect.stringMatching(/^usr/), email: 'carol@test.local', name: 'Carol', is_admin: false,
      default_base_id: expect.stringMatching(/^bse/), created_at: expect.any(String), updated_at: expect.any(String),
    });
    const listed = await ok(await c.request('GET', '/api/v1/users?page_size=1000'));
    expect(listed.items.map((u: any) => u.id)).toContain(created.id);
    expect(listed.total).toBe(listed.items.length);
    expect(JSON.stringify(listed)).not.toMatch(/password/i);
    expect(await ok(await c.request('GET', `/api/v1/users/${created.id}`))).toEqual(created);

    const changed = await ok(await c.request('PUT', `/api/v1/users/${created.id}`, { body: { name: 'Caroline', password: 'new-password-1' } }));
    expect(changed).toMatchObject({ id: created.id, email: 'carol@test.local', name: 'Caroline', is_admin: false });
    expectError(await login('carol@test.local', 'password-123'), 401, 'UNAUTHORIZED');
    const token = (await ok(await login('carol@test.local', 'new-password-1'))).token;
    expectError(await c.request('GET', '/api/v1/users', { token }), 403, 'FORBIDDEN');

    expect((await ok(await c.request('PUT', `/api/v1/users/${created.id}`, { body: { is_admin: true } }))).is_admin).toBe(true);
    expect((await c.request('GET', '/api/v1/users', { token })).status).toBe(200);
    expect((await ok(await c.request('PUT', `/api/v1/users/${created.id}`, { body: { is_admin: false } }))).is_admin).toBe(false);

    expect(await ok(await c.request('DELETE', `/api/v1/users/${created.id}`))).toEqual({ id: created.id, deleted: true });
    expectError(await c.request('GET', `/api/v1/users/${created.id}`), 404, 'NOT_FOUND');
    expectError(await c.request('GET', '/api/auth/me', { token }), 401, 'UNAUTHORIZED');
    expectError(await login('carol@test.local', 'new-password-1'), 401, 'UNAUTHORIZED');
    expectError(await c.request('DELETE', `/api/v1/users/${created.id}`), 404, 'NOT_FOUND');
  });

  it('a duplicate email is a 409, on create and on change, whatever its case', async () => {
    const a = await newUser({ email: 'dup@test.local', name: 'Dup', password: 'password-123' });
    const b = await newUser({ email: 'other-dup@test.local', name: 'Other', password: 'password-123' });
    const count = (await ok(await c.request('GET', '/api/v1/users'))).total;
    expectError(await c.request('POST', '/api/v1/users', { body: { email: 'dup@test.local', name: 'Again', password: 'password-123' } }), 409, 'CONFLICT', /dup@test.local/);
    expectError(await c.request('POST', '/api/v1/users', { body: { email: 'DUP@test.local', name: 'Again', password: 'password-123' } }), 409, 'CONFLICT');
    expectError(await c.request('PUT', `/api/v1/users/${b.id}`, { body: { email: 'dup@test.local' } }), 409, 'CONFLICT');
    expect((await ok(await c.request('GET', '/api/v1/users'))).total).toBe(count);
    expect((await ok(await c.request('GET', `/api/v1/users/${b.id}`))).email).toBe('other-dup@test.local');
    // Keeping one's own email is not a clash.
    expect((await c.request('PUT', `/api/v1/users/${a.id}`, { body: { email: 'dup@test.local', name: 'Dup 2' } })).status).toBe(200);
  });

  it('refuses bad user input with a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ email: 'not-an-email', name: 'X', password: 'password-123' }, /email/],
      [{ email: 'short@test.local', name: 'X', password: 'short' }, /password/],
      [{ email: 'noname@test.local', name: '', password: 'password-123' }, /name/],
      [{ email: 'admin-flag@test.local', name: 'X', password: 'password-123', is_admin: 'yes' }, /is_admin/],
      [{ name: 'X', password: 'password-123' }, /email/],
    ];
    for (const [body, msg] of cases) expectError(await c.request('POST', '/api/v1/users', { body }), 400, 'BAD_REQUEST', msg);
    const names = (await ok(await c.request('GET', '/api/v1/users?page_size=1000'))).items.map((u: any) => u.email);
    expect(names.filter((e: string) => /short@|noname@|admin-flag@/.test(e))).toEqual([]);
  });

  it('the last system administrator can be neither deleted nor demoted', async () => {
    const app = await makeApp();
    try {
      const me = (await app.request('GET', '/api/auth/me')).body.data;
      const del = await app.request('DELETE', `/api/v1/users/${me.id}`);
      expect(del.status).toBe(409);
      expect(del.body).toMatchObject({ code: 409, error: 'CONFLICT', data: null });
      const demote = await app.request('PUT', `/api/v1/users/${me.id}`, { body: { is_admin: false } });
      expect(demote.status).toBe(409);
      expect(demote.body).toMatchObject({ code: 409, error: 'CONFLICT', data: null });
      expect((await app.request('GET', `/api/v1/users/${me.id}`)).body.data.is_admin).toBe(true);
      expect((await app.request('GET', '/api/v1/users')).status).toBe(200);

      // With a second administrator the first may step down; then the second is the last one.
      const second = (await app.request('POST', '/api/v1/users', { body: { email: 'second@test.local', name: 'Second', password: 'password-123', is_admin: true } })).body.data;
      expect(second.is_admin).toBe(true);
      const secondToken = await app.login('second@test.local', 'password-123');
      expect((await app.request('PUT', `/api/v1/users/${me.id}`, { body: { is_admin: false } })).status).toBe(200);
      expect((await app.request('GET', '/api/v1/users')).status).toBe(403);
      expect((await app.request('DELETE', `/api/v1/users/${second.id}`, { token: secondToken })).status).toBe(409);
      expect((await app.request('PUT', `/api/v1/users/${second.id}`, { token: secondToken, body: { is_admin: false } })).status).toBe(409);
      expect((await app.request('DELETE', `/api/v1/users/${me.id}`, { token: secondToken })).status).toBe(200);
    } finally {
      app.close();
    }
  });
});

describe('default base', () => {
  it('every new user owns a base "My base", its default base', async () => {
    const u = await c.user('Fresh');
    const bases = await ok(await c.request('GET', '/api/v1/bases', { token: u.token }));
    expect(bases.total).toBe(1);
    expect(bases.items).toEqual([{ id: u.defaultBaseId, name: 'My base', description: '', role: 'owner', created_at: expect.any(String), updated_at: expect.any(String) }]);
    const members = await ok(await c.request('GET', `/api/v1/bases/${u.defaultBaseId}/members`, { token: u.token }));
    expect(members).toEqual([{ user_id: u.id, email: u.email, name: 'Fresh', role: 'owner', created_at: expect.any(String) }]);
    // Each user's default base is their own.
    const v = await c.user('Fresh');
    expect(v.defaultBaseId).not.toBe(u.defaultBaseId);
    expectError(await c.request('GET', `/api/v1/bases/${u.defaultBaseId}`, { token: v.token }), 403, 'FORBIDDEN');
  });

  it('POST /api/v1/tables without base_id uses the default base; with base_id that base', async () => {
    const u = await c.user('Tabler');
    const t = await ok(await c.request('POST', '/api/v1/tables', { token: u.token, body: { name: 'Inbox', description: 'd' } }), 201);
    expect(t).toEqual({ id: expect.stringMatching(/^tbl/), base_id: u.defaultBaseId, name: 'Inbox', description: 'd', created_at: expect.any(String), updated_at: expect.any(String) });
    const other = await ok(await c.request('POST', '/api/v1/bases', { token: u.token, body: { name: 'Second' } }), 201);
    const t2 = await ok(await c.request('POST', '/api/v1/tables', { token: u.token, body: { base_id: other.id, name: 'Inbox' } }), 201);
    expect(t2.base_id).toBe(other.id);
    const fields = await ok(await c.request('GET', `/api/v1/tables/${t.id}/fields`, { token: u.token }));
    expect(fields).toEqual({ items: [], total: 0, page: 1, page_size: 50 });
    // Once the default base is gone there is none to fall back on.
    await ok(await c.request('DELETE', `/api/v1/bases/${u.defaultBaseId}`, { token: u.token }));
    expectError(await c.request('POST', '/api/v1/tables', { token: u.token, body: { name: 'Orphan' } }), 400, 'BAD_REQUEST', /base_id/);
  });

  it('GET /api/v1/tables without base_id lists the tables of every base the caller can read', async () => {
    const u = await c.user('Reader');
    const stranger = await c.user('Stranger');
    const own = await makeTable(c, [], { token: u.token, name: 'Own' });
    const shared = await ok(await c.request('POST', '/api/v1/bases', { token: stranger.token, body: { name: 'Shared' } }), 201);
    const sharedTable = await makeTable(c, [], { token: stranger.token, baseId: shared.id, name: 'SharedT' });
    const hidden = await makeTable(c, [], { token: stranger.token, name: 'Hidden' });
    await ok(await c.request('PUT', `/api/v1/bases/${shared.id}/members/${u.id}`, { token: stranger.token, body: { role: 'viewer' } }));

    const mine = await ok(await c.request('GET', '/api/v1/tables', { token: u.token }));
    expect(mine.items.map((t: any) => [t.id, t.base_id])).toEqual([[own, u.defaultBaseId], [sharedTable, shared.id]]);
    expect(mine).toMatchObject({ total: 2, page: 1, page_size: 20 });
    const paged = await ok(await c.request('GET', '/api/v1/tables?page=2&page_size=1', { token: u.token }));
    expect(paged).toMatchObject({ total: 2, page: 2, page_size: 1 });
    expect(paged.items.map((t: any) => t.id)).toEqual([sharedTable]);
    const theirs = await ok(await c.request('GET', '/api/v1/tables', { token: stranger.token }));
    expect(theirs.items.map((t: any) => t.id)).toEqual([sharedTable, hidden]);
    const all = await ok(await c.request('GET', '/api/v1/tables?page_size=1000'));
    expect(all.items.map((t: any) => t.id)).toEqual(expect.arrayContaining([own, sharedTable, hidden]));
    const one = await ok(await c.request('GET', `/api/v1/tables?base_id=${shared.id}`, { token: u.token }));
    expect(one.items.map((t: any) => t.id)).toEqual([sharedTable]);
    expectError(await c.request('GET', `/api/v1/tables?base_id=${stranger.defaultBaseId}`, { token: u.token }), 403, 'FORBIDDEN');
  });
});

describe('bases', () => {
  it('create, read, list, change and delete', async () => {
    const u = await c.user('Baser');
    const b = await ok(await c.request('POST', '/api/v1/bases', { token: u.token, body: { name: ' Projects ', description: 'all of them' } }), 201);
    expect(b).toEqual({ id: expect.stringMatching(/^bse/), name: 'Projects', description: 'all of them', role: 'owner', created_at: expect.any(String), updated_at: b.created_at });
    expect(await ok(await c.request('GET', `/api/v1/bases/${b.id}`, { token: u.token }))).toEqual(b);
    const list = await ok(await c.request('GET', '/api/v1/bases', { token: u.token }));
    expect(list.items.map((x: any) => x.name)).toEqual(['My base', 'Projects']);
    // The system administrator sees every base, as owner.
    const all = await ok(await c.request('GET', '/api/v1/bases?page_size=1000'));
    expect(all.items.find((x: any) => x.id === b.id)).toMatchObject({ role: 'owner' });

    const both = await ok(await c.request('PUT', `/api/v1/bases/${b.id}`, { token: u.token, body: { name: 'Work', description: 'changed' } }));
    expect(both).toMatchObject({ id: b.id, name: 'Work', description: 'changed' });
    expect(await ok(await c.request('GET', `/api/v1/bases/${b.id}`, { token: u.token }))).toMatchObject({ name: 'Work', description: 'changed' });

    expect(await ok(await c.request('DELETE', `/api/v1/bases/${b.id}`, { token: u.token }))).toEqual({ id: b.id, deleted: true });
    expectError(await c.request('GET', `/api/v1/bases/${b.id}`, { token: u.token }), 404, 'NOT_FOUND');
    expect((await ok(await c.request('GET', '/api/v1/bases', { token: u.token }))).items.map((x: any) => x.name)).toEqual(['My base']);
  });

  it('PUT changes only the keys it is given (name alone, description alone)', async () => {
    const b = await ok(await c.request('POST', '/api/v1/bases', { body: { name: 'Partial', description: 'keep me' } }), 201);
    const renamed = await c.request('PUT', `/api/v1/bases/${b.id}`, { body: { name: 'Renamed' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Renamed', description: 'keep me' });
    const described = await c.request('PUT', `/api/v1/bases/${b.id}`, { body: { description: 'new words' } });
    expect(described.status, JSON.stringify(described.body)).toBe(200);
    expect(described.body.data).toMatchObject({ name: 'Renamed', description: 'new words' });
    expect(await ok(await c.request('GET', `/api/v1/bases/${b.id}`))).toMatchObject({ name: 'Renamed', description: 'new words' });
  });

  it('tables: PUT changes only the keys it is given (name alone, description alone)', async () => {
    const t = await ok(await c.request('POST', '/api/v1/tables', { body: { name: 'PartialT', description: 'keep me' } }), 201);
    const renamed = await c.request('PUT', `/api/v1/tables/${t.id}`, { body: { name: 'RenamedT' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'RenamedT', description: 'keep me' });
    const described = await c.request('PUT', `/api/v1/tables/${t.id}`, { body: { description: 'new words' } });
    expect(described.status, JSON.stringify(described.body)).toBe(200);
    expect(described.body.data).toMatchObject({ name: 'RenamedT', description: 'new words' });
    expect(await ok(await c.request('GET', `/api/v1/tables/${t.id}`))).toMatchObject({ name: 'RenamedT', description: 'new words' });
  });

  it('refuses a bad name with a 400 naming it', async () => {
    const before = (await ok(await c.request('GET', '/api/v1/bases'))).total;
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 5 }, { name: 'x'.repeat(256) }, { name: 'ok', description: 5 }]) {
      const res = await c.request('POST', '/api/v1/bases', { body });
      expectError(res, 400, 'BAD_REQUEST', 'description' in body ? /description/ : /name/);
    }
    expect((await ok(await c.request('GET', '/api/v1/bases'))).total).toBe(before);
  });

  it('deleting a base deletes its tables, their records and their storage', async () => {
    const u = await c.user('Deleter');
    const b = await ok(await c.request('POST', '/api/v1/bases', { token: u.token, body: { name: 'Doomed' } }), 201);
    const t1 = await makeTable(c, [{ name: 'N', type: 'text' }], { token: u.token, baseId: b.id, name: 'One' });
    const t2 = await makeTable(c, [{ name: 'L', type: 'link', config: { table_id: t1 } }], { token: u.token, baseId: b.id, name: 'Two' });
    const r = await ok(await c.request('POST', `/api/v1/tables/${t1}/records`, { token: u.token, body: { fields: { N: 'x' } } }), 201);
    await ok(await c.request('POST', `/api/v1/tables/${t2}/records`, { token: u.token, body: { fields: { L: [r.id] } } }), 201);
    const keep = await makeTable(c, [], { token: u.token, name: 'Kept' });

    await ok(await c.request('DELETE', `/api/v1/bases/${b.id}`, { token: u.token }));
    for (const t of [t1, t2]) {
      expectError(await c.request('GET', `/api/v1/tables/${t}`, { token: u.token }), 404, 'NOT_FOUND');
      expectError(await c.request('GET', `/api/v1/tables/${t}/records`), 404, 'NOT_FOUND');
      expectError(await c.request('GET', `/api/v1/tables/${t}/fields`), 404, 'NOT_FOUND');
    }
    expectError(await c.request('GET', `/api/v1/tables/${t1}/records/${r.id}`), 404, 'NOT_FOUND');
    expect((await ok(await c.request('GET', '/api/v1/tables', { token: u.token }))).items.map((t: any) => t.id)).toEqual([keep]);
    const storage = ENGINE === 'sqlite'
      ? await testSql(c.app).rows("SELECT name FROM sqlite_master WHERE name LIKE ? OR name LIKE ?", [`%${t1}%`, `%${t2}%`])
      : await testSql(c.app).rows('SELECT relname FROM pg_class WHERE relname LIKE ? OR relname LIKE ?', [`%${t1}%`, `%${t2}%`]);
    expect(storage).toEqual([]);
    expectError(await c.request('GET', `/api/v1/bases/${b.id}/members`, { token: u.token }), 404, 'NOT_FOUND');
  });
});

describe('members', () => {
  let owner: Awaited<ReturnType<TestClient['user']>>;
  let admin: Awaited<ReturnType<TestClient['user']>>;
  let editor: Awaited<ReturnType<TestClient['user']>>;
  let base: string;
  const roles = async () =>
    Object.fromEntries((await ok(await c.request('GET', `/api/v1/bases/${base}/members`))).map((m: any) => [m.user_id, m.role]));

  beforeAll(async () => {
    owner = await c.user('Owner');
    admin = await c.user('Admin');
    editor = await c.user('Editor');
    base = (await ok(await c.request('POST', '/api/v1/bases', { token: owner.token, body: { name: 'Team' } }), 201)).id;
  });

  it('admins add members and change roles; the member object has user_id, email, name, role', async () => {
    const added = await ok(await c.request('PUT', `/api/v1/bases/${base}/members/${admin.id}`, { token: owner.token, body: { role: 'admin' } }));
    expect(added).toEqual({ user_id: admin.id, email: admin.email, name: 'Admin', role: 'admin', created_at: expect.any(String) });
    expect((await ok(await c.request('PUT', `/api/v1/bases/${base}/members/${editor.id}`, { token: admin.token, body: { role: 'viewer' } }))).role).toBe('viewer');
    expect((await ok(await c.request('PUT', `/api/v1/bases/${base}/members/${editor.id}`, { token: admin.token, body: { role: 'editor' } }))).role).toBe('editor');
    expect(await roles()).toEqual({ [owner.id]: 'owner', [admin.id]: 'admin', [editor.id]: 'editor' });
    const list = await ok(await c.request('GET', `/api/v1/bases/${base}/members`, { token: editor.token }));
    expect(list.map((m: any) => m.user_id)).toEqual([owner.id, admin.id, editor.id]);
    // The member now sees the base, with their role.
    expect((await ok(await c.request('GET', `/api/v1/bases/${base}`, { token: editor.token }))).role).toBe('editor');
  });

  it('refuses an unknown role, an unknown user and a missing role', async () => {
    const before = await roles();
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${editor.id}`, { token: owner.token, body: { role: 'superuser' } }), 400, 'BAD_REQUEST', /role/);
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${editor.id}`, { token: owner.token, body: {} }), 400, 'BAD_REQUEST', /role/);
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/usrnope`, { token: owner.token, body: { role: 'viewer' } }), 404, 'NOT_FOUND');
    expectError(await c.request('DELETE', `/api/v1/bases/${base}/members/usrnope`, { token: owner.token }), 404, 'NOT_FOUND');
    expect(await roles()).toEqual(before);
  });

  it('only an owner grants, changes or removes the owner role', async () => {
    const before = await roles();
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${editor.id}`, { token: admin.token, body: { role: 'owner' } }), 403, 'FORBIDDEN');
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${admin.id}`, { token: admin.token, body: { role: 'owner' } }), 403, 'FORBIDDEN');
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${owner.id}`, { token: admin.token, body: { role: 'viewer' } }), 403, 'FORBIDDEN');
    expectError(await c.request('DELETE', `/api/v1/bases/${base}/members/${owner.id}`, { token: admin.token }), 403, 'FORBIDDEN');
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${admin.id}`, { token: editor.token, body: { role: 'viewer' } }), 403, 'FORBIDDEN');
    expectError(await c.request('DELETE', `/api/v1/bases/${base}/members/${admin.id}`, { token: editor.token }), 403, 'FORBIDDEN');
    expect(await roles()).toEqual(before);
    // An admin cannot delete the base either.
    expectError(await c.request('DELETE', `/api/v1/bases/${base}`, { token: admin.token }), 403, 'FORBIDDEN');
  });

  it('a base keeps one owner: the last owner can be neither demoted nor removed (409)', async () => {
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${owner.id}`, { token: owner.token, body: { role: 'admin' } }), 409, 'CONFLICT', /owner/);
    expectError(await c.request('DELETE', `/api/v1/bases/${base}/members/${owner.id}`, { token: owner.token }), 409, 'CONFLICT', /owner/);
    // The system administrator acts as owner, and is held to the same rule.
    expectError(await c.request('DELETE', `/api/v1/bases/${base}/members/${owner.id}`), 409, 'CONFLICT');
    expect((await roles())[owner.id]).toBe('owner');

    // With a second owner, the first may step down; then the second is the last one.
    expect((await ok(await c.request('PUT', `/api/v1/bases/${base}/members/${admin.id}`, { token: owner.token, body: { role: 'owner' } }))).role).toBe('owner');
    expect((await ok(await c.request('PUT', `/api/v1/bases/${base}/members/${owner.id}`, { token: owner.token, body: { role: 'admin' } }))).role).toBe('admin');
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${admin.id}`, { token: admin.token, body: { role: 'editor' } }), 409, 'CONFLICT');
    expectError(await c.request('DELETE', `/api/v1/bases/${base}/members/${admin.id}`, { token: admin.token }), 409, 'CONFLICT');
    // The former owner, now an admin, can no longer touch the owner.
    expectError(await c.request('PUT', `/api/v1/bases/${base}/members/${admin.id}`, { token: owner.token, body: { role: 'admin' } }), 403, 'FORBIDDEN');
    expect(await roles()).toEqual({ [owner.id]: 'admin', [admin.id]: 'owner', [editor.id]: 'editor' });
    // The system administrator may grant ownership back.
    expect((await ok(await c.request('PUT', `/api/v1/bases/${base}/members/${owner.id}`, { body: { role: 'owner' } }))).role).toBe('owner');
  });

  it('removing a member takes their access away', async () => {
    const t = await makeTable(c, [], { token: owner.token, baseId: base, name: 'Private' });
    expect((await c.request('GET', `/api/v1/tables/${t}`, { token: editor.token })).status).toBe(200);
    expect(await ok(await c.request('DELETE', `/api/v1/bases/${base}/members/${editor.id}`, { token: owner.token }))).toEqual({ user_id: editor.id, removed: true });
    expectError(await c.request('GET', `/api/v1/tables/${t}`, { token: editor.token }), 403, 'FORBIDDEN');
    expectError(await c.request('GET', `/api/v1/bases/${base}`, { token: editor.token }), 403, 'FORBIDDEN');
    expect((await ok(await c.request('GET', '/api/v1/bases', { token: editor.token }))).items.map((b: any) => b.id)).not.toContain(base);
    expectError(await c.request('DELETE', `/api/v1/bases/${base}/members/${editor.id}`, { token: owner.token }), 404, 'NOT_FOUND');
  });
});

describe('first administrator', () => {
  it('is the configured ADMIN account', async () => {
    const me = await ok(await c.request('GET', '/api/auth/me'));
    expect(me).toMatchObject({ id: adminId, email: ADMIN.email, is_admin: true });
  });
});
