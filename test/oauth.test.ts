// OAuth applications (spec 1 sections 2-5, 7; contract section 6): the management API, the client-credentials
// token endpoint, the tokens themselves (claims, signature, expiry, revocation), verification without a
// database query, and the application audit log.
import fs from 'node:fs';
import path from 'node:path';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { readConfig } from '../src/config.js';
import { version } from '../src/version.js';
import { ADMIN, makeApp, makeTable, type TestClient, type TestResponse } from './helpers.js';
import { capturedSql, testSql } from './database.js';

const PUBLIC_URL = 'http://test.local';
const AUDIENCE = `${PUBLIC_URL}/api/open/v1`;
const ALL_SCOPES = ['base:read', 'table:read', 'field:read', 'record:read', 'record:write', 'table:write'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CLIENT_ID = /^oa_[A-Za-z0-9_-]{32,}$/;
const CLIENT_SECRET = /^os_[A-Za-z0-9_-]{32,}$/;
const APP_KEYS = ['allowed_bases', 'app_name', 'callback_url', 'client_id', 'created_at', 'id', 'is_active', 'rate_limit_per_minute', 'scopes', 'updated_at', 'write_rate_limit_per_minute'];
const FORM = 'application/x-www-form-urlencoded';

interface AppData {
  id: string;
  app_name: string;
  client_id: string;
  client_secret: string;
  allowed_bases: string[];
  scopes: string[];
  [key: string]: unknown;
}

let c: TestClient;
let baseId: string;
let tableId: string;
let bob: { id: string; token: string; defaultBaseId: string; email: string };

beforeAll(async () => {
  c = await makeApp();
  const base = await c.request('POST', '/api/v1/bases', { body: { name: 'OAuth base' } });
  expect(base.status).toBe(201);
  baseId = base.body.data.id;
  tableId = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId });
  bob = await c.user('Bob');
});
afterAll(() => c?.close());

// ---------------------------------------------------------------------------------------------------------------
// Helpers

async function newApp(body: Record<string, unknown> = {}, client: TestClient = c, bases: string[] = [baseId]): Promise<AppData> {
  const res = await client.request('POST', '/api/oauth/apps', {
    body: { app_name: 'Test app', callback_url: 'https://client.example/callback', scopes: ALL_SCOPES, allowed_bases: bases, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const basicHeader = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
/** Percent-encodes every character, so the server must URL-decode Basic credentials (RFC 6749 2.3.1). */
const encodeAll = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

function tokenRequest(opts: { form?: Record<string, string>; json?: unknown; raw?: string; contentType?: string; authorization?: string; client?: TestClient }): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  if (opts.authorization) headers.authorization = opts.authorization;
  let raw = opts.raw;
  if (opts.form) {
    raw = form(opts.form);
    headers['content-type'] = FORM;
  }
  if (opts.json !== undefined) {
    raw = JSON.stringify(opts.json);
    headers['content-type'] = 'application/json';
  }
  if (opts.contentType) headers['content-type'] = opts.contentType;
  return (opts.client ?? c).request('POST', '/api/oauth/token', { token: null, raw, headers });
}

async function issue(app: { client_id: string; client_secret: string }, scope?: string, client: TestClient = c): Promise<string> {
  const res = await tokenRequest({
    client,
    form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, ...(scope ? { scope } : {}) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token;
}

/** The open family's error envelope, exactly, with request_id equal to the X-Request-Id header. */
function expectOpenError(res: TestResponse, status: number, error: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ code: status, message: expect.any(String), error, request_id: res.headers.get('x-request-id') });
  expect(res.body.message.length).toBeGreaterThan(0);
}

/** The RFC 6749 error shape of the token endpoint, exactly, with Cache-Control: no-store. */
function expectTokenError(res: TestResponse, status: number, error: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error, error_description: expect.any(String), request_id: res.headers.get('x-request-id') });
  expect(res.headers.get('cache-control')).toBe('no-store');
}

function expectOpenSuccess(res: TestResponse, status = 200) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ code: 0, message: expect.any(String), request_id: res.headers.get('x-request-id') });
  expect(res.body).toHaveProperty('data');
}

const openBase = (token: string | null, id = baseId) => c.request('GET', `/api/open/v1/bases/${id}`, { token });

// ---------------------------------------------------------------------------------------------------------------

describe('management endpoints: who may call them', () => {
  it('refuses another user (403 forbidden), an application token (403 forbidden) and no token (401 unauthorized) on every endpoint', async () => {
    const target = await newApp({ app_name: 'Guarded' });
    const appToken = await issue(target);
    const tokenJti = decodeJwt(appToken).jti as string;
    const endpoints: Array<[string, string, unknown?]> = [
      ['GET', '/api/oauth/apps'],
      ['POST', '/api/oauth/apps', { app_name: 'X', callback_url: 'https://x.example/cb', scopes: ['base:read'], allowed_bases: [] }],
      ['GET', `/api/oauth/apps/${target.id}`],
      ['PUT', `/api/oauth/apps/${target.id}`, { app_name: 'Renamed' }],
      ['DELETE', `/api/oauth/apps/${target.id}`],
      ['POST', `/api/oauth/apps/${target.id}/reset-secret`],
      ['GET', `/api/oauth/apps/${target.id}/tokens`],
      ['POST', `/api/oauth/apps/${target.id}/tokens/revoke`, { jti: tokenJti }],
      ['GET', `/api/oauth/apps/${target.id}/audit`],
      ['GET', '/api/oauth/bases'],
    ];
    for (const [method, url, body] of endpoints) {
      const asUser = await c.request(method, url, { token: bob.token, body });
      expectOpenError(asUser, 403, 'forbidden');
      const asApp = await c.request(method, url, { token: appToken, body });
      expectOpenError(asApp, 403, 'forbidden');
      const anonymous = await c.request(method, url, { token: null, body });
      expectOpenError(anonymous, 401, 'unauthorized');
    }
    // Nothing was changed by the refused calls.
    const after = await c.request('GET', `/api/oauth/apps/${target.id}`);
    expect(after.status).toBe(200);
    expect(after.body.data.app_name).toBe('Guarded');
    expect((await issue(target)).length).toBeGreaterThan(0);
    const tokens = await c.request('GET', `/api/oauth/apps/${target.id}/tokens`);
    expect(tokens.body.data.every((t: any) => t.revoked === false)).toBe(true);
  });
});

describe('management endpoints for a system administrator', () => {
  it('creates an application: ids, a secret shown once, defaults', async () => {
    const res = await c.request('POST', '/api/oauth/apps', {
      body: { app_name: 'Created', callback_url: 'https://client.example/cb', scopes: ['base:read', 'record:read'], allowed_bases: [baseId] },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      code: 0, message: expect.any(String), request_id: res.headers.get('x-request-id'),
      data: {
        id: expect.stringMatching(UUID), app_name: 'Created', client_id: expect.stringMatching(CLIENT_ID), client_secret: expect.stringMatching(CLIENT_SECRET),
        callback_url: 'https://client.example/cb', allowed_bases: [baseId], scopes: ['base:read', 'record:read'], is_active: true,
        rate_limit_per_minute: 600, write_rate_limit_per_minute: 300, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO),
      },
    });
    const app = res.body.data as AppData;

    // The secret never appears again: not in GET, not in the list.
    const one = await c.request('GET', `/api/oauth/apps/${app.id}`);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body.data).sort()).toEqual(APP_KEYS);
    const { client_secret: _secret, ...withoutSecret } = app;
    expect(one.body.data).toEqual(withoutSecret);
    expect(JSON.stringify(one.body)).not.toContain(app.client_secret);
    const list = await c.request('GET', '/api/oauth/apps');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ code: 0, message: expect.any(String), data: expect.any(Array), request_id: list.headers.get('x-request-id') });
    const listed = list.body.data.find((a: any) => a.id === app.id);
    expect(listed).toEqual(withoutSecret);
    for (const a of list.body.data) expect(Object.keys(a).sort()).toEqual(APP_KEYS);
    expect(JSON.stringify(list.body)).not.toContain(app.client_secret);
  });

  it('stores no plaintext secret in the database, before or after a reset', async () => {
    const app = await newApp({ app_name: 'Hashed' });
    const dump = async () => JSON.stringify(await testSql(c.app).rows('SELECT * FROM apps'));
    const secretBody = (s: string) => s.slice(3);
    expect(await dump()).toContain(app.client_id);
    expect(await dump()).not.toContain(secretBody(app.client_secret));
    const reset = await c.request('POST', `/api/oauth/apps/${app.id}/reset-secret`);
    expect(reset.status).toBe(200);
    expect(await dump()).not.toContain(secretBody(reset.body.data.client_secret));
    expect(await dump()).not.toContain(secretBody(app.client_secret));
  });

  it('refuses invalid create bodies with 400 bad_request naming the field', async () => {
    const valid = { app_name: 'Valid', callback_url: 'https://client.example/cb', scopes: ['base:read'], allowed_bases: [baseId] };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['app_name', { app_name: '' }],
      ['app_name', { app_name: 'x'.repeat(101) }],
      ['app_name', { app_name: 42 }],
      ['app_name', { app_name: undefined }],
      ['callback_url', { callback_url: 'not a url' }],
      ['callback_url', { callback_url: '/relative/callback' }],
      ['callback_url', { callback_url: 'ftp://client.example/cb' }],
      ['callback_url', { callback_url: 'javascript:alert(1)' }],
      ['callback_url', { callback_url: undefined }],
      ['scopes', { scopes: [] }],
      ['scopes', { scopes: ['base:read', 'base:write'] }],
      ['scopes', { scopes: ['admin'] }],
      ['scopes', { scopes: 'base:read' }],
      ['scopes', { scopes: undefined }],
      ['allowed_bases', { allowed_bases: ['bseDoesNotExist'] }],
      ['allowed_bases', { allowed_bases: [baseId, 'bseDoesNotExist'] }],
      ['allowed_bases', { allowed_bases: 'not-an-array' }],
    ];
    const before = (await c.request('GET', '/api/oauth/apps')).body.data.length;
    for (const [field, change] of cases) {
      const res = await c.request('POST', '/api/oauth/apps', { body: { ...valid, ...change } });
      expectOpenError(res, 400, 'bad_request');
      expect(res.body.message, `${JSON.stringify(change)} → ${res.body.message}`).toContain(field);
    }
    expect((await c.request('GET', '/api/oauth/apps')).body.data.length).toBe(before);

    // The edges that are allowed.
    const edge = await c.request('POST', '/api/oauth/apps', {
      body: { ...valid, app_name: 'y'.repeat(100), callback_url: 'http://localhost:3000/cb', scopes: [...ALL_SCOPES] },
    });
    expect(edge.status).toBe(201);
    expect(edge.body.data.app_name).toBe('y'.repeat(100));
    const one = await c.request('POST', '/api/oauth/apps', { body: { ...valid, app_name: 'z' } });
    expect(one.status).toBe(201);
  });

  it('answers 404 not_found for an application that does not exist', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const [method, url, body] of [
      ['GET', `/api/oauth/apps/${missing}`],
      ['PUT', `/api/oauth/apps/${missing}`, { app_name: 'x' }],
      ['DELETE', `/api/oauth/apps/${missing}`],
      ['POST', `/api/oauth/apps/${missing}/reset-secret`],
      ['GET', `/api/oauth/apps/${missing}/tokens`],
      ['POST', `/api/oauth/apps/${missing}/tokens/revoke`, {}],
      ['GET', `/api/oauth/apps/${missing}/audit`],
    ] as Array<[string, string, unknown?]>) {
      expectOpenError(await c.request(method, url, { body }), 404, 'not_found');
    }
  });

  it('PUT changes only the keys given and validates them as at create', async () => {
    const app = await newApp({ app_name: 'Before', scopes: ['base:read'] });
    const res = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { app_name: 'After', rate_limit_per_minute: 50 } });
    expectOpenSuccess(res);
    expect(Object.keys(res.body.data).sort()).toEqual(APP_KEYS);
    expect(res.body.data).toMatchObject({
      id: app.id, app_name: 'After', client_id: app.client_id, callback_url: 'https://client.example/callback', allowed_bases: [baseId],
      scopes: ['base:read'], is_active: true, rate_limit_per_minute: 50, write_rate_limit_per_minute: 300,
    });
    expect(JSON.stringify(res.body)).not.toContain(app.client_secret);
    for (const [field, body] of [
      ['app_name', { app_name: '' }],
      ['callback_url', { callback_url: 'mailto:x@y.z' }],
      ['scopes', { scopes: [] }],
      ['scopes', { scopes: ['nope'] }],
      ['allowed_bases', { allowed_bases: ['bseMissing'] }],
      ['is_active', { is_active: 'no' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const bad = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body });
      expectOpenError(bad, 400, 'bad_request');
      expect(bad.body.message).toContain(field);
    }
    const unchanged = await c.request('GET', `/api/oauth/apps/${app.id}`);
    expect(unchanged.body.data).toMatchObject({ app_name: 'After', scopes: ['base:read'], allowed_bases: [baseId], is_active: true });
  });

  it('lists every base for choosing allowed_bases, including bases the administrator is not a member of', async () => {
    const res = await c.request('GET', '/api/oauth/bases');
    expectOpenSuccess(res);
    const ids = res.body.data.map((b: any) => b.id);
    expect(ids).toContain(baseId);
    expect(ids).toContain(bob.defaultBaseId);
    const mine = res.body.data.find((b: any) => b.id === baseId);
    expect(mine).toMatchObject({ id: baseId, name: 'OAuth base' });
  });

  it('deletes an application: {id, deleted: true}, it is gone, its tokens answer 401 and are revoked', async () => {
    const app = await newApp({ app_name: 'Doomed' });
    const token = await issue(app);
    expect((await openBase(token)).status).toBe(200);
    const del = await c.request('DELETE', `/api/oauth/apps/${app.id}`);
    expectOpenSuccess(del);
    expect(del.body.data).toEqual({ id: app.id, deleted: true });
    expectOpenError(await c.request('GET', `/api/oauth/apps/${app.id}`), 404, 'not_found');
    expectOpenError(await openBase(token), 401, 'unauthorized');
    expectOpenError(await c.request('GET', '/api/open/v1/bases', { token }), 401, 'unauthorized');
    expectTokenError(await tokenRequest({ form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } }), 401, 'invalid_client');
    const [row] = await testSql(c.app).rows<{ jti: string }>('SELECT jti FROM revoked_tokens WHERE jti = ?', [decodeJwt(token).jti]);
    expect(row?.jti).toBe(decodeJwt(token).jti);
  });
});

describe('secret reset, disabling and configuration changes', () => {
  it('reset-secret: the old secret fails at once, the new one works, issued tokens stay valid', async () => {
    const app = await newApp({ app_name: 'Reset' });
    const before = await issue(app);
    const reset = await c.request('POST', `/api/oauth/apps/${app.id}/reset-secret`);
    expectOpenSuccess(reset);
    const { client_secret: _old, ...rest } = app;
    expect(reset.body.data).toEqual({ ...rest, client_secret: expect.stringMatching(CLIENT_SECRET), updated_at: expect.stringMatching(ISO) });
    const fresh = reset.body.data.client_secret as string;
    expect(fresh).not.toBe(app.client_secret);

    expectTokenError(await tokenRequest({ form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } }), 401, 'invalid_client');
    const after = await issue({ client_id: app.client_id, client_secret: fresh });
    expect((await openBase(after)).status).toBe(200);
    expect((await openBase(before)).status).toBe(200);
    const again = await c.request('GET', `/api/oauth/apps/${app.id}`);
    expect(JSON.stringify(again.body)).not.toContain(fresh);
  });

  it('is_active false: token requests give 401 invalid_client, issued tokens give 403 forbidden; re-enabling restores both', async () => {
    const app = await newApp({ app_name: 'Switch' });
    const token = await issue(app);
    expect((await openBase(token)).status).toBe(200);

    const off = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { is_active: false } });
    expectOpenSuccess(off);
    expect(off.body.data.is_active).toBe(false);
    expectTokenError(await tokenRequest({ form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } }), 401, 'invalid_client');
    expectTokenError(await tokenRequest({ authorization: basicHeader(app.client_id, app.client_secret), form: { grant_type: 'client_credentials' } }), 401, 'invalid_client');
    expectOpenError(await openBase(token), 403, 'forbidden');
    expectOpenError(await c.request('GET', '/api/open/v1/bases', { token }), 403, 'forbidden');
    expectOpenError(await c.request('GET', `/api/open/v1/bases/${baseId}/tables/${tableId}/records`, { token }), 403, 'forbidden');

    const on = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { is_active: true } });
    expectOpenSuccess(on);
    expect(on.body.data.is_active).toBe(true);
    expect((await openBase(token)).status).toBe(200);
    const newer = await issue(app);
    expect((await openBase(newer)).status).toBe(200);
  });

  it('a removed scope or base binds an already-issued token on its next request', async () => {
    const other = await c.request('POST', '/api/v1/bases', { body: { name: 'Second base' } });
    const otherBase = other.body.data.id as string;
    const app = await newApp({ app_name: 'Narrowed', allowed_bases: [baseId, otherBase] });
    const token = await issue(app);
    const records = `/api/open/v1/bases/${baseId}/tables/${tableId}/records`;
    expect((await c.request('GET', records, { token })).status).toBe(200);
    expect((await openBase(token, otherBase)).status).toBe(200);

    const noRead = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { scopes: ALL_SCOPES.filter((s) => s !== 'record:read') } });
    expectOpenSuccess(noRead);
    expectOpenError(await c.request('GET', records, { token }), 403, 'forbidden');
    expect((await openBase(token)).status).toBe(200);

    const oneBase = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { allowed_bases: [baseId] } });
    expectOpenSuccess(oneBase);
    expectOpenError(await openBase(token, otherBase), 403, 'forbidden');
    const listed = await c.request('GET', '/api/open/v1/bases', { token });
    expect(listed.body.data.map((b: any) => b.id)).toEqual([baseId]);

    // A scope the application regains is usable again by the same token (it was in the token all along).
    await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { scopes: ALL_SCOPES } });
    expect((await c.request('GET', records, { token })).status).toBe(200);
  });
});

describe('token endpoint', () => {
  let app: AppData;
  beforeAll(async () => {
    app = await newApp({ app_name: 'Token endpoint', scopes: ['base:read', 'table:read', 'record:read'] });
  });
  const success = (res: TestResponse, scope = 'base:read table:read record:read') => {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 7200, scope });
    expect(res.headers.get('cache-control')).toBe('no-store');
  };

  it('takes a form body with the credentials in the body', async () => {
    success(await tokenRequest({ form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } }));
  });

  it('takes a JSON body with the credentials in the body', async () => {
    success(await tokenRequest({ json: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } }));
  });

  it('takes HTTP Basic credentials, plain and URL-encoded (RFC 6749 2.3.1), with a form or JSON body', async () => {
    success(await tokenRequest({ authorization: basicHeader(app.client_id, app.client_secret), form: { grant_type: 'client_credentials' } }));
    success(await tokenRequest({ authorization: basicHeader(encodeAll(app.client_id), encodeAll(app.client_secret)), form: { grant_type: 'client_credentials' } }));
    success(await tokenRequest({ authorization: basicHeader(app.client_id, app.client_secret), json: { grant_type: 'client_credentials', scope: 'base:read' } }), 'base:read');
  });

  it('Basic and body credentials together → 400 invalid_request', async () => {
    const res = await tokenRequest({
      authorization: basicHeader(app.client_id, app.client_secret),
      form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret },
    });
    expectTokenError(res, 400, 'invalid_request');
  });

  it('missing or wrong credentials → 401 invalid_client; with Basic the answer carries WWW-Authenticate: Basic', async () => {
    const grant = { grant_type: 'client_credentials' };
    const bodyCases: Array<Record<string, string>> = [
      grant,
      { ...grant, client_id: app.client_id },
      { ...grant, client_secret: app.client_secret },
      { ...grant, client_id: app.client_id, client_secret: 'os_wrongwrongwrongwrongwrongwrongwrongwrong' },
      { ...grant, client_id: app.client_id, client_secret: '' },
      { ...grant, client_id: 'oa_unknownunknownunknownunknownunknown', client_secret: app.client_secret },
    ];
    for (const f of bodyCases) expectTokenError(await tokenRequest({ form: f }), 401, 'invalid_client');
    expectTokenError(await tokenRequest({ json: { ...grant, client_id: app.client_id, client_secret: `${app.client_secret}x` } }), 401, 'invalid_client');

    for (const auth of [
      basicHeader(app.client_id, 'os_wrongwrongwrongwrongwrongwrongwrongwrong'),
      basicHeader('oa_unknownunknownunknownunknownunknown', app.client_secret),
      basicHeader(app.client_id, ''),
    ]) {
      const res = await tokenRequest({ authorization: auth, form: grant });
      expectTokenError(res, 401, 'invalid_client');
      expect(res.headers.get('www-authenticate') ?? '').toMatch(/^Basic\b/i);
    }
  });

  it('grant_type missing → 400 invalid_request; another grant type → 400 unsupported_grant_type', async () => {
    const creds = { client_id: app.client_id, client_secret: app.client_secret };
    expectTokenError(await tokenRequest({ form: creds }), 400, 'invalid_request');
    expectTokenError(await tokenRequest({ json: creds }), 400, 'invalid_request');
    for (const grant of ['authorization_code', 'password', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer']) {
      expectTokenError(await tokenRequest({ form: { ...creds, grant_type: grant } }), 400, 'unsupported_grant_type');
    }
    // Client authentication comes first: bad credentials with a bad grant are still invalid_client.
    expectTokenError(await tokenRequest({ form: { client_id: app.client_id, client_secret: 'os_nopenopenopenopenopenopenopenopenope', grant_type: 'password' } }), 401, 'invalid_client');
  });

  it('narrows the scope to a requested subset; an unknown scope or one beyond the grant → 403 invalid_scope', async () => {
    const creds = { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret };
    success(await tokenRequest({ form: { ...creds, scope: 'base:read' } }), 'base:read');
    const two = await tokenRequest({ form: { ...creds, scope: 'record:read base:read' } });
    expect(two.status).toBe(200);
    expect(two.body.scope.split(' ').sort()).toEqual(['base:read', 'record:read']);
    expect((decodeJwt(two.body.access_token).scope as string).split(' ').sort()).toEqual(['base:read', 'record:read']);

    // The narrowed token really lacks the other scopes.
    const narrow = await tokenRequest({ form: { ...creds, scope: 'base:read' } });
    const t = narrow.body.access_token as string;
    expect((await openBase(t)).status).toBe(200);
    expectOpenError(await c.request('GET', `/api/open/v1/bases/${baseId}/tables`, { token: t }), 403, 'forbidden');

    for (const scope of ['record:write', 'base:read record:write', 'admin', 'base:read nonsense:scope', 'table:write']) {
      expectTokenError(await tokenRequest({ form: { ...creds, scope } }), 403, 'invalid_scope');
    }
  });

  it('an unreadable body → 400 invalid_request', async () => {
    expectTokenError(await tokenRequest({ raw: '{"grant_type": "client_credentials",', contentType: 'application/json' }), 400, 'invalid_request');
    expectTokenError(await tokenRequest({ raw: 'not json at all', contentType: 'application/json' }), 400, 'invalid_request');
    expectTokenError(await tokenRequest({ raw: '[1, 2, 3]', contentType: 'application/json' }), 400, 'invalid_request');
  });

  it('an unreadable body with valid Basic credentials → 400 invalid_request (the body is checked first)', async () => {
    const auth = basicHeader(app.client_id, app.client_secret);
    expectTokenError(await tokenRequest({ authorization: auth, raw: '{broken', contentType: 'application/json' }), 400, 'invalid_request');
  });

  it('every answer carries Cache-Control: no-store', async () => {
    const answers = [
      await tokenRequest({ form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } }),
      await tokenRequest({ form: { grant_type: 'client_credentials' } }),
      await tokenRequest({ form: { grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret } }),
      await tokenRequest({ raw: '{', contentType: 'application/json' }),
      await tokenRequest({ form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, scope: 'record:write' } }),
      await tokenRequest({ authorization: basicHeader(app.client_id, app.client_secret), form: { grant_type: 'client_credentials' } }),
    ];
    for (const a of answers) expect(a.headers.get('cache-control'), `${a.status} ${JSON.stringify(a.body)}`).toBe('no-store');
  });
});

describe('discovery and the issued token', () => {
  it('publishes RFC 8414 metadata', async () => {
    const res = await c.request('GET', '/.well-known/oauth-authorization-server', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      issuer: PUBLIC_URL,
      token_endpoint: `${PUBLIC_URL}/api/oauth/token`,
      jwks_uri: `${PUBLIC_URL}/api/oauth/jwks.json`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
    expect([...res.body.scopes_supported].sort()).toEqual([...ALL_SCOPES].sort());
  });

  it('signs tokens that verify with nothing but /api/oauth/jwks.json, with the claims of the spec', async () => {
    const app = await newApp({ app_name: 'Claims', scopes: ['base:read', 'record:read'] });
    const res = await tokenRequest({ form: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret } });
    expect(res.status).toBe(200);
    const token = res.body.access_token as string;

    const jwksRes = await c.app.fetch(new Request(`${PUBLIC_URL}/api/oauth/jwks.json`));
    expect(jwksRes.status).toBe(200);
    const jwks = (await jwksRes.json()) as { keys: JWK[] };
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const k of jwks.keys) expect(k).not.toHaveProperty('d');
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: PUBLIC_URL, audience: AUDIENCE });

    expect(protectedHeader.alg).toBe('EdDSA');
    expect(typeof protectedHeader.kid).toBe('string');
    expect(jwks.keys.map((k) => k.kid)).toContain(protectedHeader.kid);
    expect(payload).toMatchObject({
      client_id: app.client_id, app_id: app.id, sub: app.id, token_type: 'app', scope: 'base:read record:read',
      iss: PUBLIC_URL, aud: AUDIENCE, jti: expect.any(String),
    });
    expect(Number.isInteger(payload.iat)).toBe(true);
    expect(payload.exp).toBe(payload.iat! + 7200);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(60);
    expect((payload.jti as string).length).toBeGreaterThan(0);
    // Each token gets its own jti.
    const second = await issue(app);
    expect(decodeJwt(second).jti).not.toBe(payload.jti);
  });
});

describe('refused tokens on the Open API', () => {
  let app: AppData;
  let token: string;
  let kid: string;
  let privateJwk: JWK;
  beforeAll(async () => {
    app = await newApp({ app_name: 'Refusals' });
    token = await issue(app);
    kid = decodeProtectedHeader(token).kid!;
    privateJwk = JSON.parse(await c.app.store.secret('signing-key', async () => {
      throw new Error('the server made its signing key at start');
    }));
  });

  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const claimsFor = (overrides: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return {
      sub: app.id, app_id: app.id, client_id: app.client_id, scope: ALL_SCOPES.join(' '), token_type: 'app',
      jti: `crafted-${Math.random().toString(36).slice(2)}`, iss: PUBLIC_URL, aud: AUDIENCE, iat: now, exp: now + 7200, ...overrides,
    };
  };
  async function signWithServerKey(claims: Record<string, unknown>) {
    const key = await importJWK(privateJwk, 'EdDSA');
    return new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' }).sign(key);
  }

  it('accepts a token crafted with the server key (control for the cases below)', async () => {
    expect((await openBase(await signWithServerKey(claimsFor()))).status).toBe(200);
  });

  it('a forged signature → 401', async () => {
    const [h, p, s] = token.split('.');
    const sig = Buffer.from(s, 'base64url');
    sig[10] ^= 0xff;
    expectOpenError(await openBase(`${h}.${p}.${sig.toString('base64url')}`), 401, 'unauthorized');
    // A changed payload under the original signature.
    const tampered = b64({ ...decodeJwt(token), scope: ALL_SCOPES.join(' '), app_id: 'someone-else' });
    expectOpenError(await openBase(`${h}.${tampered}.${s}`), 401, 'unauthorized');
  });

  it('alg none → 401', async () => {
    const unsigned = `${b64({ alg: 'none', typ: 'JWT', kid })}.${b64(claimsFor())}.`;
    expectOpenError(await openBase(unsigned), 401, 'unauthorized');
    const unsigned2 = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(decodeJwt(token))}.`;
    expectOpenError(await openBase(unsigned2), 401, 'unauthorized');
  });

  it('a token signed by another key, even with the server kid → 401', async () => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const other = await new SignJWT(claimsFor()).setProtectedHeader({ alg: 'EdDSA', kid }).sign(privateKey);
    expectOpenError(await openBase(other), 401, 'unauthorized');
    const es = await generateKeyPair('ES256');
    const es256 = await new SignJWT(claimsFor()).setProtectedHeader({ alg: 'ES256', kid }).sign(es.privateKey);
    expectOpenError(await openBase(es256), 401, 'unauthorized');
  });

  it('another algorithm (HS256 keyed with the public key) → 401', async () => {
    const pub = (await c.app.fetch(new Request(`${PUBLIC_URL}/api/oauth/jwks.json`)).then((r) => r.json())) as { keys: JWK[] };
    const secret = new TextEncoder().encode(JSON.stringify(pub.keys[0]));
    const hs = await new SignJWT(claimsFor()).setProtectedHeader({ alg: 'HS256', kid }).sign(secret);
    expectOpenError(await openBase(hs), 401, 'unauthorized');
    const xBytes = Buffer.from(pub.keys[0].x!, 'base64url');
    const hs2 = await new SignJWT(claimsFor()).setProtectedHeader({ alg: 'HS256', kid }).sign(xBytes);
    expectOpenError(await openBase(hs2), 401, 'unauthorized');
  });

  it('an expired token → 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await signWithServerKey(claimsFor({ iat: now - 7300, exp: now - 100 }));
    expectOpenError(await openBase(expired), 401, 'unauthorized');
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const expiredOther = await new SignJWT(claimsFor({ iat: now - 7300, exp: now - 100 })).setProtectedHeader({ alg: 'EdDSA', kid }).sign(privateKey);
    expectOpenError(await openBase(expiredOther), 401, 'unauthorized');
  });

  it('a token with another issuer or audience → 401', async () => {
    expectOpenError(await openBase(await signWithServerKey(claimsFor({ iss: 'http://evil.example' }))), 401, 'unauthorized');
    expectOpenError(await openBase(await signWithServerKey(claimsFor({ aud: 'table-service:user' }))), 401, 'unauthorized');
  });

  it('garbage and non-Bearer Authorization → 401', async () => {
    expectOpenError(await openBase('not-a-jwt'), 401, 'unauthorized');
    const res = await c.request('GET', `/api/open/v1/bases/${baseId}`, { token: null, headers: { authorization: basicHeader(app.client_id, app.client_secret) } });
    expectOpenError(res, 401, 'unauthorized');
    expectOpenError(await openBase(null), 401, 'unauthorized');
  });

  it('a user token → 403 forbidden, even the administrator\'s', async () => {
    expectOpenError(await openBase(c.adminToken), 403, 'forbidden');
    expectOpenError(await c.request('GET', '/api/open/v1/bases', { token: bob.token }), 403, 'forbidden');
  });

  it('a revoked token → 401', async () => {
    const t = await issue(app);
    expect((await openBase(t)).status).toBe(200);
    const rev = await c.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { body: { jti: decodeJwt(t).jti } });
    expect(rev.body.data).toEqual({ revoked: 1 });
    expectOpenError(await openBase(t), 401, 'unauthorized');
    expect((await openBase(token)).status).toBe(200);
  });
});

describe('token list and revocation', () => {
  it('lists tokens newest first with revoked flags; revokes one by jti, then all; an unknown jti → 404', async () => {
    const app = await newApp({ app_name: 'Revoker', scopes: ['base:read', 'record:read'] });
    const other = await newApp({ app_name: 'Other' });
    const otherToken = await issue(other);
    const issued: string[] = [];
    for (let i = 0; i < 5; i++) issued.push(await issue(app, i % 2 ? 'base:read' : undefined));
    const jtis = issued.map((t) => decodeJwt(t).jti as string);

    const list = await c.request('GET', `/api/oauth/apps/${app.id}/tokens`);
    expectOpenSuccess(list);
    expect(list.body.data.map((t: any) => t.jti)).toEqual([...jtis].reverse());
    for (const [i, t] of list.body.data.entries()) {
      const claims = decodeJwt(issued[issued.length - 1 - i]);
      expect(t).toEqual({
        jti: claims.jti, scope: claims.scope, issued_at: new Date(claims.iat! * 1000).toISOString(),
        expires_at: new Date(claims.exp! * 1000).toISOString(), revoked: false, revoked_at: null,
      });
    }

    const one = await c.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { body: { jti: jtis[1] } });
    expectOpenSuccess(one);
    expect(one.body.data).toEqual({ revoked: 1 });
    expectOpenError(await openBase(issued[1]), 401, 'unauthorized');
    expect((await openBase(issued[0])).status).toBe(200);
    const afterOne = (await c.request('GET', `/api/oauth/apps/${app.id}/tokens`)).body.data;
    const flagged = afterOne.find((t: any) => t.jti === jtis[1]);
    expect(flagged).toMatchObject({ revoked: true, revoked_at: expect.stringMatching(ISO) });
    expect(afterOne.filter((t: any) => t.revoked).length).toBe(1);

    // Revoking the same token again revokes nothing new.
    expect((await c.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { body: { jti: jtis[1] } })).body.data).toEqual({ revoked: 0 });

    expectOpenError(await c.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { body: { jti: 'no-such-jti' } }), 404, 'not_found');
    // Another application's token is not one of this application's tokens.
    expectOpenError(await c.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { body: { jti: decodeJwt(otherToken).jti } }), 404, 'not_found');
    expect((await openBase(otherToken)).status).toBe(200);

    const all = await c.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { body: {} });
    expectOpenSuccess(all);
    expect(all.body.data).toEqual({ revoked: 4 });
    for (const t of issued) expectOpenError(await openBase(t), 401, 'unauthorized');
    const afterAll = (await c.request('GET', `/api/oauth/apps/${app.id}/tokens`)).body.data;
    expect(afterAll.every((t: any) => t.revoked === true && ISO.test(t.revoked_at))).toBe(true);
    // The other application is untouched, and this one can still get new tokens.
    expect((await openBase(otherToken)).status).toBe(200);
    expect((await openBase(await issue(app))).status).toBe(200);

    // No body at all revokes every unexpired token too.
    const none = await c.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`);
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual({ revoked: 1 });
  });

  it('revocation survives a restart; other tokens stay valid after it', async () => {
    const r = await makeApp();
    try {
      const bases = await r.request('GET', '/api/oauth/bases');
      const b = bases.body.data[0].id as string;
      const app = await newApp({ app_name: 'Restart' }, r, [b]);
      const kept = await issue(app, undefined, r);
      const dropped = await issue(app, undefined, r);
      const rev = await r.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { body: { jti: decodeJwt(dropped).jti } });
      expect(rev.body.data).toEqual({ revoked: 1 });
      await r.app.close();

      const again = await createApp(readConfig({
        DATA_DIR: r.dir, PUBLIC_URL, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ...(r.databaseUrl ? { DATABASE_URL: r.databaseUrl } : {}),
      }, version));
      try {
        const call = async (t: string) => {
          const res = await again.fetch(new Request(`${PUBLIC_URL}/api/open/v1/bases/${b}`, { headers: { authorization: `Bearer ${t}` } }));
          return { status: res.status, body: (await res.json()) as any };
        };
        const droppedRes = await call(dropped);
        expect(droppedRes.status).toBe(401);
        expect(droppedRes.body.error).toBe('unauthorized');
        expect((await call(kept)).status).toBe(200);
        const list = await again.fetch(new Request(`${PUBLIC_URL}/api/oauth/apps/${app.id}/tokens`, { headers: { authorization: `Bearer ${r.adminToken}` } }));
        const tokens = ((await list.json()) as any).data;
        const flags = Object.fromEntries(tokens.map((t: any) => [t.jti, t.revoked]));
        expect(flags).toEqual({ [decodeJwt(dropped).jti as string]: true, [decodeJwt(kept).jti as string]: false });
      } finally {
        await again.close();
      }
    } finally {
      fs.rmSync(r.dir, { recursive: true, force: true });
    }
  });
});

describe('verification needs no database query', () => {
  it('actorFromHeader runs no SQL statement for an application token', async () => {
    const app = await newApp({ app_name: 'No query' });
    const warm = await issue(app);
    const cold = await issue(app);
    await c.app.services.auth.actorFromHeader(`Bearer ${warm}`);

    // The counter works: an ordinary query is seen.
    expect(await capturedSql(c.app, () => testSql(c.app).rows('SELECT 1'))).not.toEqual([]);

    // A token never seen before (signature checked now) and a token seen before, many times.
    const sent = await capturedSql(c.app, async () => {
      const first = await c.app.services.auth.actorFromHeader(`Bearer ${cold}`);
      expect(first).toMatchObject({ kind: 'app', id: app.id });
      for (let i = 0; i < 200; i++) {
        const actor = await c.app.services.auth.actorFromHeader(`Bearer ${i % 2 ? warm : cold}`);
        expect(actor?.kind).toBe('app');
      }
    });
    expect(sent).toEqual([]);
  });
});

describe('audit log', () => {
  it('records Open API writes and management actions, newest first, paginated, filterable by action', async () => {
    const app = await newApp({ app_name: 'Audited' });
    const token = await issue(app);
    const records = `/api/open/v1/bases/${baseId}/tables/${tableId}/records`;

    const created = await c.request('POST', records, { token, body: { Name: 'audited' }, headers: { 'x-request-id': 'req-create-1' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('req-create-1');
    const recordId = created.body.data.id as string;
    const updated = await c.request('PUT', `${records}/${recordId}`, { token, body: { Name: 'changed' }, headers: { 'x-request-id': 'req-update-1' } });
    expect(updated.status).toBe(200);
    const deleted = await c.request('DELETE', `${records}/${recordId}`, { token, headers: { 'x-request-id': 'req-delete-1' } });
    expect(deleted.status).toBe(200);
    // A refused write leaves no entry.
    expect((await c.request('POST', records, { token, body: { Nope: 1 } })).status).toBe(400);

    const upd = await c.request('PUT', `/api/oauth/apps/${app.id}`, { body: { app_name: 'Audited 2' }, headers: { 'x-request-id': 'req-app-update' } });
    expect(upd.status).toBe(200);
    const reset = await c.request('POST', `/api/oauth/apps/${app.id}/reset-secret`, { headers: { 'x-request-id': 'req-secret-reset' } });
    expect(reset.status).toBe(200);
    const rev = await c.request('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { body: { jti: decodeJwt(token).jti }, headers: { 'x-request-id': 'req-token-revoke' } });
    expect(rev.status).toBe(200);

    const res = await c.request('GET', `/api/oauth/apps/${app.id}/audit`);
    expectOpenSuccess(res);
    const entries = res.body.data as any[];
    const actions = entries.map((e) => e.action);
    // Newest first; app.create (or any other earlier entry) sits at the end.
    expect(actions.slice(0, 6)).toEqual(['token.revoke', 'secret.reset', 'app.update', 'record.delete', 'record.update', 'record.create']);
    expect(res.body.pagination).toEqual({ page: 1, per_page: 20, total: entries.length, pages: 1 });
    for (const e of entries) {
      expect(Object.keys(e).sort()).toEqual(['action', 'app_id', 'at', 'base_id', 'detail', 'id', 'record_id', 'request_id', 'table_id']);
      expect(e.app_id).toBe(app.id);
      expect(e.at).toMatch(ISO);
    }
    const ats = entries.map((e) => e.at);
    expect([...ats].sort().reverse()).toEqual(ats);
    const byAction = (a: string) => entries.find((e) => e.action === a);
    for (const [action, requestId] of [['record.create', 'req-create-1'], ['record.update', 'req-update-1'], ['record.delete', 'req-delete-1']]) {
      expect(byAction(action)).toMatchObject({ app_id: app.id, base_id: baseId, table_id: tableId, record_id: recordId, request_id: requestId });
    }
    expect(byAction('app.update')).toMatchObject({ request_id: 'req-app-update' });
    expect(byAction('secret.reset')).toMatchObject({ request_id: 'req-secret-reset' });
    expect(byAction('token.revoke')).toMatchObject({ request_id: 'req-token-revoke' });
    expect(JSON.stringify(entries)).not.toContain(reset.body.data.client_secret);
    expect(JSON.stringify(entries)).not.toContain(app.client_secret);

    // Pagination.
    const total = entries.length;
    const p1 = await c.request('GET', `/api/oauth/apps/${app.id}/audit?per_page=2`);
    expect(p1.body.pagination).toEqual({ page: 1, per_page: 2, total, pages: Math.ceil(total / 2) });
    expect(p1.body.data.map((e: any) => e.id)).toEqual(entries.slice(0, 2).map((e) => e.id));
    const p2 = await c.request('GET', `/api/oauth/apps/${app.id}/audit?per_page=2&page=2`);
    expect(p2.body.pagination).toEqual({ page: 2, per_page: 2, total, pages: Math.ceil(total / 2) });
    expect(p2.body.data.map((e: any) => e.id)).toEqual(entries.slice(2, 4).map((e) => e.id));
    expectOpenError(await c.request('GET', `/api/oauth/apps/${app.id}/audit?per_page=0`), 400, 'bad_request');
    expectOpenError(await c.request('GET', `/api/oauth/apps/${app.id}/audit?page=abc`), 400, 'bad_request');

    // Filter by action.
    const onlyCreate = await c.request('GET', `/api/oauth/apps/${app.id}/audit?action=record.create`);
    expect(onlyCreate.body.data.map((e: any) => e.action)).toEqual(['record.create']);
    expect(onlyCreate.body.pagination).toEqual({ page: 1, per_page: 20, total: 1, pages: 1 });
    const none = await c.request('GET', `/api/oauth/apps/${app.id}/audit?action=nothing.like.this`);
    expect(none.body.data).toEqual([]);
    expect(none.body.pagination.total).toBe(0);

    // Entries belong to their application only.
    const other = await newApp({ app_name: 'Quiet' });
    const quiet = await c.request('GET', `/api/oauth/apps/${other.id}/audit?action=record.create`);
    expect(quiet.body.data).toEqual([]);
  });
});
