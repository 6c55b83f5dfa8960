// Idempotency-Key (contract section 14): a repeat of a POST, PUT or DELETE under /api/v1 or /api/open/v1 with the same
// key, method, path and body gets the first answer again (its own request_id aside) and changes nothing; 5xx answers are
// not kept, 4xx are; another method, path or body is a 422, a repeat while the first runs a 409; a malformed key a 400.
// Keys are per actor; on PostgreSQL a second app over the same database honours them too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import Database from 'better-sqlite3';
import { and, eq } from 'drizzle-orm';
import { ENGINE } from './database.js';
import { ADMIN, makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';
import { fingerprint } from '../rest-adapters/idempotency.js';
import { ANSWER_FILE } from '../src/db/sqlite-answer-file.js';
import { DB_FILE } from '../src/db/sqlite-store.js';

let c: TestClient;
let adminId: string;
let baseId: string;
let bob: { id: string; token: string };
let seq = 0;
/** A key no other test uses. */
const newKey = (label = 'k') => `${label}-${++seq}-${Math.random().toString(36).slice(2)}`;

async function freshTable(name?: string): Promise<string> {
  return makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Count', type: 'number' }], { baseId, name });
}
async function countRecords(tableId: string): Promise<number> {
  const res = await c.request('GET', `/api/v1/tables/${tableId}/records`);
  expect(res.status).toBe(200);
  return res.body.data.total;
}
const send = (method: string, url: string, key: string | undefined, opts: { body?: unknown; token?: string; requestId?: string } = {}) =>
  c.request(method, url, {
    body: opts.body, token: opts.token,
    headers: { ...(key !== undefined ? { 'idempotency-key': key } : {}), ...(opts.requestId ? { 'x-request-id': opts.requestId } : {}) },
  });

function expectReplayOf(repeat: TestResponse, original: TestResponse) {
  expect(repeat.status).toBe(original.status);
  expect(repeat.headers.get('idempotent-replayed')).toBe('true');
  const requestId = repeat.headers.get('x-request-id');
  expect(requestId).not.toBe(original.headers.get('x-request-id'));
  if (original.body && 'request_id' in original.body) {
    expect(repeat.body.request_id).toBe(requestId);
    expect({ ...repeat.body, request_id: 'x' }).toEqual({ ...original.body, request_id: 'x' });
  } else expect(repeat.body).toEqual(original.body);
}

function expectV1Error(res: TestResponse, status: number, error: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ code: status, msg: expect.any(String), error, data: null, request_id: res.headers.get('x-request-id'), ...(res.body.details ? { details: res.body.details } : {}) });
  expect(res.headers.get('idempotent-replayed')).toBeNull();
}

/** Holds the next call of `createRecord` until `release()`; the request is running (its key claimed) meanwhile. */
function holdNextCreate() {
  const records = c.app.services.records;
  const original = records.createRecord;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  records.createRecord = async (...args: Parameters<typeof original>) => {
    records.createRecord = original;
    entered();
    await gate;
    return original(...args);
  };
  return { started, release };
}

beforeAll(async () => {
  c = await makeApp();
  adminId = (await c.request('GET', '/api/auth/me')).body.data.id;
  const base = await c.request('POST', '/api/v1/bases', { body: { name: 'Idempotent base' } });
  baseId = base.body.data.id;
  bob = await c.user('Bob');
  expect((await c.request('PUT', `/api/v1/bases/${baseId}/members/${bob.id}`, { body: { role: 'editor' } })).status).toBe(200);
});
afterAll(() => c?.close());

describe('Idempotency-Key on /api/v1', () => {
  it('a repeated create answers the same 201 and body with Idempotent-Replayed, and makes one record', async () => {
    const tableId = await freshTable();
    const key = newKey();
    const body = { fields: { Name: 'Once', Count: 1 } };
    const first = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body, requestId: 'first-create' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.headers.get('x-request-id')).toBe('first-create');
    const repeat = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body, requestId: 'repeat-create' });
    expectReplayOf(repeat, first);
    expect(repeat.headers.get('x-request-id')).toBe('repeat-create');
    expect(repeat.body.data.id).toBe(first.body.data.id);
    // A third time, with the body's keys in another order: the same request, the same answer.
    const third = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body: { fields: { Count: 1, Name: 'Once' } } });
    expectReplayOf(third, first);
    expect(await countRecords(tableId)).toBe(1);
  });

  it('requests without the header behave as before: every POST creates, nothing is replayed', async () => {
    const tableId = await freshTable();
    const body = { fields: { Name: 'Twice' } };
    const a = await send('POST', `/api/v1/tables/${tableId}/records`, undefined, { body });
    const b = await send('POST', `/api/v1/tables/${tableId}/records`, undefined, { body });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.data.id).not.toBe(b.body.data.id);
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(await countRecords(tableId)).toBe(2);
    // GET is not covered: a malformed key there is ignored.
    expect((await send('GET', `/api/v1/tables/${tableId}/records`, '')).status).toBe(200);
  });

  it('a 4xx is kept: the repeat gets the same error (with its own request_id) even once the request would succeed', async () => {
    const tableId = await freshTable();
    const key = newKey();
    const body = { fields: { Name: 'Later', Colour: 'red' } };
    const first = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body });
    expectV1Error(first, 400, 'BAD_REQUEST');
    // The field now exists: without the key the same body is created; with it, the kept 400 comes back.
    expect((await c.request('POST', `/api/v1/tables/${tableId}/fields`, { body: { name: 'Colour', type: 'text' } })).status).toBe(201);
    const repeat = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body });
    expectReplayOf(repeat, first);
    expect(repeat.body.request_id).toBe(repeat.headers.get('x-request-id'));
    expect(await countRecords(tableId)).toBe(0);
    // A body refused by the route's schema is kept as well (the key is claimed as soon as the body is read).
    const schemaKey = newKey();
    const refused = await send('POST', `/api/v1/tables/${tableId}/records`, schemaKey, { body: { fields: 'nope' } });
    expectV1Error(refused, 400, 'BAD_REQUEST');
    expectReplayOf(await send('POST', `/api/v1/tables/${tableId}/records`, schemaKey, { body: { fields: 'nope' } }), refused);
  });

  it('a 5xx is not kept: the repeat runs again, and its answer is the one kept', async () => {
    const tableId = await freshTable();
    const key = newKey();
    const records = c.app.services.records;
    const original = records.createRecord;
    records.createRecord = async () => {
      records.createRecord = original;
      throw new Error('the disk fell off');
    };
    const body = { fields: { Name: 'Retried' } };
    const failed = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body });
    expectV1Error(failed, 500, 'INTERNAL_ERROR');
    const retried = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expectReplayOf(await send('POST', `/api/v1/tables/${tableId}/records`, key, { body }), retried);
    expect(await countRecords(tableId)).toBe(1);
  });

  it('the same key with another body, path or method is a 422 IDEMPOTENCY_KEY_REUSED that changes nothing', async () => {
    const tableId = await freshTable();
    const other = await freshTable();
    const key = newKey();
    const first = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body: { fields: { Name: 'A' } } });
    expect(first.status).toBe(201);
    expectV1Error(await send('POST', `/api/v1/tables/${tableId}/records`, key, { body: { fields: { Name: 'B' } } }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectV1Error(await send('POST', `/api/v1/tables/${other}/records`, key, { body: { fields: { Name: 'A' } } }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectV1Error(await send('PUT', `/api/v1/tables/${tableId}/records/${first.body.data.id}`, key, { body: { fields: { Name: 'A' } } }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectV1Error(await send('DELETE', `/api/v1/tables/${tableId}/records/${first.body.data.id}`, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await countRecords(tableId)).toBe(1);
    expect(await countRecords(other)).toBe(0);
    // The key still holds its first answer.
    expectReplayOf(await send('POST', `/api/v1/tables/${tableId}/records`, key, { body: { fields: { Name: 'A' } } }), first);
  });

  it('keys are per actor: another user\'s identical request with the same key runs on its own', async () => {
    const tableId = await freshTable();
    const key = newKey();
    const body = { fields: { Name: 'Mine' } };
    const mine = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body });
    const bobs = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body, token: bob.token });
    expect([mine.status, bobs.status]).toEqual([201, 201]);
    expect(bobs.headers.get('idempotent-replayed')).toBeNull();
    expect(bobs.body.data.id).not.toBe(mine.body.data.id);
    expectReplayOf(await send('POST', `/api/v1/tables/${tableId}/records`, key, { body, token: bob.token }), bobs);
    expect(await countRecords(tableId)).toBe(2);
  });

  it('a repeat while the first is still running is a 409 CONFLICT; once it has answered, the answer is replayed', async () => {
    const tableId = await freshTable();
    const key = newKey();
    const body = { fields: { Name: 'Slow' } };
    const hold = holdNextCreate();
    const firstPending = send('POST', `/api/v1/tables/${tableId}/records`, key, { body });
    await hold.started;
    const during = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body });
    expectV1Error(during, 409, 'CONFLICT');
    expect(during.headers.get('retry-after')).toBe('1');
    // Another body while it runs is still a 422: the key belongs to the first request.
    expectV1Error(await send('POST', `/api/v1/tables/${tableId}/records`, key, { body: { fields: { Name: 'Other' } } }), 422, 'IDEMPOTENCY_KEY_REUSED');
    hold.release();
    const first = await firstPending;
    expect(first.status).toBe(201);
    expectReplayOf(await send('POST', `/api/v1/tables/${tableId}/records`, key, { body }), first);
    expect(await countRecords(tableId)).toBe(1);
  });

  it('two identical 1000-record batches sent at once: one runs, the other is a 409 (or, if late, a replay)', async () => {
    const tableId = await freshTable();
    const key = newKey('batch');
    const body = { action: 'create', records: Array.from({ length: 1000 }, (_, i) => ({ fields: { Name: `R${i}`, Count: i } })) };
    const answers = await Promise.all([0, 1].map(() => send('POST', `/api/v1/tables/${tableId}/records/batch`, key, { body })));
    const ran = answers.filter((a) => a.status === 200 && !a.headers.get('idempotent-replayed'));
    expect(ran).toHaveLength(1);
    const otherOne = answers.find((a) => a !== ran[0])!;
    if (otherOne.status === 409) expectV1Error(otherOne, 409, 'CONFLICT');
    else expectReplayOf(otherOne, ran[0]);
    expect(await countRecords(tableId)).toBe(1000);
  });

  it('a malformed key (empty, 256 characters, control or non-ASCII characters) is a 400 and runs nothing', async () => {
    const tableId = await freshTable();
    const url = `/api/v1/tables/${tableId}/records`;
    for (const key of ['', 'x'.repeat(256), 'a\tb', 'a\u0001b', 'caf\u00e9']) {
      const res = await send('POST', url, key, { body: { fields: { Name: 'Bad key' } } });
      expectV1Error(res, 400, 'BAD_REQUEST');
      expect(res.body.details).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    }
    expect(await countRecords(tableId)).toBe(0);
    // The bounds: 255 characters and spaces or punctuation inside are fine.
    expect((await send('POST', url, 'y'.repeat(255), { body: { fields: { Name: 'Long key' } } })).status).toBe(201);
    expect((await send('POST', url, `a key with spaces ~!@#$%^&*() ${newKey()}`, { body: { fields: { Name: 'Spaced key' } } })).status).toBe(201);
    expect(await countRecords(tableId)).toBe(2);
  });

  it('PUT: the repeat replays the first answer and leaves a later change alone', async () => {
    const tableId = await freshTable();
    const id = (await send('POST', `/api/v1/tables/${tableId}/records`, undefined, { body: { fields: { Name: 'Start' } } })).body.data.id;
    const key = newKey();
    const url = `/api/v1/tables/${tableId}/records/${id}`;
    const first = await send('PUT', url, key, { body: { fields: { Name: 'A' } } });
    expect(first.status).toBe(200);
    expect((await send('PUT', url, undefined, { body: { fields: { Name: 'B' } } })).body.data.fields.Name).toBe('B');
    const repeat = await send('PUT', url, key, { body: { fields: { Name: 'A' } } });
    expectReplayOf(repeat, first);
    expect(repeat.body.data.fields.Name).toBe('A');
    expect((await c.request('GET', url)).body.data.fields.Name).toBe('B');
  });

  it('DELETE: the repeat replays the 200 rather than a 404; without the key a second delete is a 404', async () => {
    const tableId = await freshTable();
    const create = (name: string) => send('POST', `/api/v1/tables/${tableId}/records`, undefined, { body: { fields: { Name: name } } });
    const a = (await create('A')).body.data.id;
    const b = (await create('B')).body.data.id;
    const key = newKey();
    const first = await send('DELETE', `/api/v1/tables/${tableId}/records/${a}`, key);
    expect(first.status).toBe(200);
    expectReplayOf(await send('DELETE', `/api/v1/tables/${tableId}/records/${a}`, key), first);
    expect((await send('DELETE', `/api/v1/tables/${tableId}/records/${b}`, undefined)).status).toBe(200);
    expectV1Error(await send('DELETE', `/api/v1/tables/${tableId}/records/${b}`, undefined), 404, 'NOT_FOUND');
  });

  it('a claim whose request died is taken over once its lease has passed; a kept answer past 24 h no longer replays', async () => {
    const tableId = await freshTable();
    const { store } = c.app;
    const keys = store.schema.idempotencyKeys;
    const url = `/api/v1/tables/${tableId}/records`;
    const body = { fields: { Name: 'Orphan' } };
    const key = newKey('dead');
    // A request that claimed the key and then vanished (its process was killed): the row stays in flight.
    const dead = await c.app.services.idempotency.begin(`user:${adminId}`, key, fingerprint('POST', new URL(`http://test.local${url}`), body));
    expect(dead.outcome).toBe('claimed');
    expectV1Error(await send('POST', url, key, { body }), 409, 'CONFLICT');
    const where = and(eq(keys.actor, `user:${adminId}`), eq(keys.key, key));
    // PostgreSQL keeps the claim as a row with a lease, which lapses; SQLite keeps it in the memory of its one process,
    // which a restart (here a second app over the same file) starts without.
    const restarted = ENGINE === 'sqlite' ? await makeApp({ DATA_DIR: c.dir, DATABASE_URL: '' }) : undefined;
    if (!restarted) await store.transaction((tx) => tx.db.update(keys).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }).where(where));
    const taken = restarted
      ? await restarted.request('POST', url, { body, headers: { 'idempotency-key': key }, token: await restarted.login(ADMIN.email, ADMIN.password) })
      : await send('POST', url, key, { body });
    await restarted?.close();
    expect(taken.status).toBe(201);
    expect(taken.headers.get('idempotent-replayed')).toBeNull();
    // The old claim's late answer does not overwrite the new one (once written: SQLite writes it a moment later).
    if (dead.outcome === 'claimed') await dead.finish({ status: 418, headers: {}, body: '{"stale":true}' });
    await c.app.services.idempotency.flush();
    expectReplayOf(await send('POST', url, key, { body }), taken);
    // 24 h later: SQLite keeps the answers in a file of their own (src/db/sqlite-answer-file.ts), PostgreSQL in its table.
    const past = new Date(Date.now() - 1000).toISOString();
    if (ENGINE === 'sqlite') {
      const answers = new Database(path.join(c.dir, ANSWER_FILE));
      expect(answers.prepare('UPDATE idempotency_keys SET expires_at = ? WHERE actor = ? AND key = ?').run(past, `user:${adminId}`, key).changes).toBe(1);
      answers.close();
    } else await store.transaction((tx) => tx.db.update(keys).set({ expiresAt: past }).where(where));
    const again = await send('POST', url, key, { body });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.data.id).not.toBe(taken.body.data.id);
    expect(await countRecords(tableId)).toBe(2);
  });
});

describe('the kept answers (src/domain/idempotency.ts)', () => {
  it('keep status, headers and body as given, and a 5xx drops the claim', async () => {
    const { idempotency } = c.app.services;
    const actor = `user:${adminId}`;
    const key = newKey('domain');
    const claim = await idempotency.begin(actor, key, 'POST /x abc');
    expect(claim.outcome).toBe('claimed');
    if (claim.outcome === 'claimed') await claim.finish({ status: 404, headers: { 'retry-after': '5' }, body: '{"code":404}' });
    expect(await idempotency.begin(actor, key, 'POST /x abc')).toEqual({ outcome: 'replay', answer: { status: 404, headers: { 'retry-after': '5' }, body: '{"code":404}' } });
    expect(await idempotency.begin(actor, key, 'POST /x abd')).toEqual({ outcome: 'reused' });
    expect((await idempotency.begin(`app:${adminId}`, key, 'POST /x abc')).outcome).toBe('claimed');

    const failing = newKey('domain-5xx');
    const first = await idempotency.begin(actor, failing, 'PUT /y 1');
    expect(await idempotency.begin(actor, failing, 'PUT /y 1')).toEqual({ outcome: 'running' });
    if (first.outcome === 'claimed') await first.finish({ status: 503, headers: {}, body: '{}' });
    const retry = await idempotency.begin(actor, failing, 'PUT /y 2');
    expect(retry.outcome).toBe('claimed');
    if (retry.outcome === 'claimed') await retry.finish({ status: 200, headers: {}, body: '{}' });
  });

  it.runIf(ENGINE === 'sqlite')('survive a restart in their own file, which takes over the answers an earlier version kept in the database', async () => {
    const tableId = await freshTable();
    const url = `/api/v1/tables/${tableId}/records`;
    const key = newKey('restart');
    const first = await send('POST', url, key, { body: { fields: { Name: 'Kept' } } });
    expect(first.status).toBe(201);
    await c.app.services.idempotency.flush();
    // A row as versions before the answer file wrote it, into the database's own table.
    const actor = `user:${adminId}`;
    const old = newKey('old');
    const database = new Database(path.join(c.dir, DB_FILE));
    database.prepare('INSERT INTO idempotency_keys (actor, key, fingerprint, status, headers, body, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(actor, old, 'POST /x old', 200, '{"retry-after":"7"}', '{"old":true}', new Date(Date.now() + 60_000).toISOString());
    const restarted = await makeApp({ DATA_DIR: c.dir, DATABASE_URL: '' });
    try {
      expect(await restarted.app.services.idempotency.begin(actor, old, 'POST /x old'))
        .toEqual({ outcome: 'replay', answer: { status: 200, headers: { 'retry-after': '7' }, body: '{"old":true}' } });
      expect(database.prepare('SELECT count(*) FROM idempotency_keys').pluck().get()).toBe(0);
      const again = await restarted.request('POST', url, { body: { fields: { Name: 'Kept' } }, headers: { 'idempotency-key': key }, token: await restarted.login(ADMIN.email, ADMIN.password) });
      expectReplayOf(again, first);
    } finally {
      database.close();
      await restarted.close();
    }
    expect(await countRecords(tableId)).toBe(1);
  });
});

describe('Idempotency-Key on /api/open/v1', () => {
  let token: string;
  let tableId: string;
  let appId: string;
  const O = '/api/open/v1/bases';

  function expectOpenError(res: TestResponse, status: number, error: string) {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body).toEqual({ code: status, message: expect.any(String), error, request_id: res.headers.get('x-request-id') });
  }

  beforeAll(async () => {
    tableId = await freshTable('Open table');
    const created = await c.request('POST', '/api/oauth/apps', {
      body: { app_name: 'Idempotent client', callback_url: 'https://client.example/cb', scopes: ['record:read', 'record:write'], allowed_bases: [baseId] },
    });
    expect(created.status).toBe(201);
    appId = created.body.data.id;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: created.body.data.client_id, client_secret: created.body.data.client_secret });
    const res = await c.request('POST', '/api/oauth/token', { token: null, raw: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(200);
    token = res.body.access_token;
  });

  it('replays a create with the repeat\'s own request_id and fresh RateLimit headers; 422 is unprocessable_entity', async () => {
    const url = `${O}/${baseId}/tables/${tableId}/records`;
    const key = newKey('open');
    const first = await send('POST', url, key, { body: { Name: 'From the app' }, token });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.request_id).toBe(first.headers.get('x-request-id'));
    const repeat = await send('POST', url, key, { body: { Name: 'From the app' }, token });
    expectReplayOf(repeat, first);
    expect(repeat.headers.get('ratelimit-remaining')).not.toBeNull();
    expect(Number(repeat.headers.get('ratelimit-remaining'))).toBeLessThan(Number(first.headers.get('ratelimit-remaining')));
    expectOpenError(await send('POST', url, key, { body: { Name: 'Something else' }, token }), 422, 'unprocessable_entity');
    expectOpenError(await send('POST', url, '', { body: { Name: 'Bad key' }, token }), 400, 'bad_request');
    expect(await countRecords(tableId)).toBe(1);
    // The application and a user are different actors: the same key is independent.
    const asAdmin = await send('POST', `/api/v1/tables/${tableId}/records`, key, { body: { fields: { Name: 'From the admin' } } });
    expect(asAdmin.status).toBe(201);
    expect(await countRecords(tableId)).toBe(2);
    // The application's audit log has the create once, under the first request's id.
    const audit = await c.request('GET', `/api/oauth/apps/${appId}/audit?action=record.create`);
    expect(audit.status).toBe(200);
    expect(audit.body.data.map((e: any) => [e.record_id, e.request_id])).toEqual([[first.body.data.id, first.headers.get('x-request-id')]]);
  });

  it('a repeat while the first runs is a 409 conflict in the open envelope', async () => {
    const url = `${O}/${baseId}/tables/${tableId}/records`;
    const key = newKey('open-running');
    const records = c.app.services.openApi;
    const original = records.createRecord;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const started = new Promise<void>((resolve) => (entered = resolve));
    records.createRecord = async (...args: Parameters<typeof original>) => {
      records.createRecord = original;
      entered();
      await gate;
      return original(...args);
    };
    const pending = send('POST', url, key, { body: { Name: 'Slow app write' }, token });
    await started;
    expectOpenError(await send('POST', url, key, { body: { Name: 'Slow app write' }, token }), 409, 'conflict');
    release();
    expect((await pending).status).toBe(201);
  });
});

describe.runIf(ENGINE === 'postgres')('several processes over one PostgreSQL database', () => {
  it('a second app over the same database honours the first one\'s keys (running and answered)', async () => {
    const other = await makeApp({ DATABASE_URL: c.databaseUrl! });
    try {
      const tableId = await freshTable();
      const key = newKey('shared');
      const url = `/api/v1/tables/${tableId}/records`;
      const body = { fields: { Name: 'Shared' } };
      const hold = holdNextCreate();
      const pending = send('POST', url, key, { body });
      await hold.started;
      const during = await other.request('POST', url, { body, headers: { 'idempotency-key': key } });
      expectV1Error(during, 409, 'CONFLICT');
      hold.release();
      const first = await pending;
      expect(first.status).toBe(201);
      expectReplayOf(await other.request('POST', url, { body, headers: { 'idempotency-key': key } }), first);
      expect(await countRecords(tableId)).toBe(1);
    } finally {
      await other.close();
    }
  });
});
