// The generated OpenAPI document of /api/v1 and /api/auth (contract sections 1 and 8): it is served, passes
// a standard validator, lists every route of the route table, and real answers of every route, successes
// and errors, conform to the schema the document gives for their path, method and status.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import JSZip from 'jszip';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The v1 document covers the v1 part of the route table; the open family has its own document.
import { v1Routes as routes } from '../rest-adapters/routes/index.js';
import { ADMIN, makeApp, type TestClient, type TestResponse } from './helpers.js';
import { send } from './http.js';

// ajv-formats is CommonJS with a `default` property; take the plugin whichever way the loader hands it over.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats: FormatsPlugin =
  ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin));

const DOC_ID = 'https://table-service.test/openapi.json';
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TIME = expect.stringMatching(ISO);
const MIB = 1024 * 1024;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
interface CallOpts {
  token?: string | null;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  query?: string;
  /** A plugin package: a zip sent as the `file` part of a multipart body (or as an application/zip body with `zip`), or a ready form. */
  upload?: Buffer | FormData;
  zip?: boolean;
}

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../examples');
const exampleManifest = (example: string) => JSON.parse(fs.readFileSync(path.join(EXAMPLES, example, 'manifest.json'), 'utf8'));

/** Zips a folder of examples/ into a .stplugin.zip, with manifest keys replaced by `patch`. */
async function pack(example: string, patch: Record<string, unknown> = {}): Promise<Buffer> {
  const zip = new JSZip();
  const dir = path.join(EXAMPLES, example);
  for (const f of fs.readdirSync(dir)) if (f !== 'manifest.json') zip.file(f, fs.readFileSync(path.join(dir, f)));
  zip.file('manifest.json', JSON.stringify({ ...exampleManifest(example), ...patch }));
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** A local upstream for the plugin proxy, exempted from the private-address rule through PLUGIN_PROXY_ALLOW_PRIVATE. */
let upstream: http.Server;
let upstreamPort = 0;

let c: TestClient;
let doc: any;
let ajv: Ajv2020;
const validators = new Map<string, ValidateFunction>();
/** `METHOD /path/template` of every route that gave a success answer that conformed. */
const succeeded = new Set<string>();
/** `METHOD /path/template STATUS` of every error answer that conformed. */
const failed = new Set<string>();

/** Points the document's local `#/components/...` refs at the components added to Ajv under DOC_ID. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (schema && typeof schema === 'object') {
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rebase(v)]));
  }
  return schema;
}

function responseSchema(method: string, template: string, status: number): unknown {
  const operation = doc.paths[template]?.[method.toLowerCase()];
  if (!operation) throw new Error(`the document has no operation ${method} ${template}`);
  const response = operation.responses[String(status)];
  if (!response) throw new Error(`the document does not list status ${status} for ${method} ${template}`);
  const schema = response.content?.['application/json']?.schema;
  if (!schema) throw new Error(`the document gives no application/json schema for ${method} ${template} ${status}`);
  return schema;
}

function validatorFor(key: string, schema: unknown): ValidateFunction {
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile(rebase(schema) as object);
    validators.set(key, v);
  }
  return v;
}

/** Throws unless the body conforms to the document's schema for that operation and status. */
function assertConforms(method: string, template: string, res: TestResponse) {
  const v = validatorFor(`${method} ${template} ${res.status}`, responseSchema(method, template, res.status));
  if (!v(res.body)) {
    throw new Error(`${method} ${template} ${res.status} does not conform to the document: ${ajv.errorsText(v.errors)}\nbody: ${JSON.stringify(res.body).slice(0, 2000)}`);
  }
}

/** Throws unless the body is a v1 error envelope (components.schemas.Error). */
function assertErrorSchema(res: TestResponse) {
  const v = validatorFor('#Error', { $ref: '#/components/schemas/Error' });
  if (!v(res.body)) throw new Error(`error body does not conform to Error: ${ajv.errorsText(v.errors)}\nbody: ${JSON.stringify(res.body)}`);
}

/** What every answer carries: JSON content type and an X-Request-Id repeated by a body's request_id. */
function assertCommon(res: TestResponse, what: string) {
  expect(res.headers.get('content-type'), `${what}: content-type`).toBe('application/json; charset=utf-8');
  const id = res.headers.get('x-request-id');
  expect(id, `${what}: X-Request-Id`).toMatch(REQUEST_ID);
  if (res.body && typeof res.body === 'object' && 'request_id' in res.body) expect(res.body.request_id, `${what}: request_id`).toBe(id);
}

/** Calls a route by its path template, asserts the status, the common headers and conformance to the document. */
async function call(method: Method, template: string, params: Record<string, string>, status: number, opts: CallOpts = {}): Promise<TestResponse> {
  const url = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (params[name] === undefined) throw new Error(`no value for {${name}}`);
    return encodeURIComponent(params[name]);
  }) + (opts.query ? `?${opts.query}` : '');
  const res = opts.upload !== undefined ? await sendUpload(method, url, opts) : await c.request(method, url, opts);
  const what = `${method} ${url}`;
  expect(res.status, `${what} answered ${JSON.stringify(res.body)?.slice(0, 500)}`).toBe(status);
  if (status < 300 && routes.find((r) => r.method === method && r.path === template)?.download) {
    // A download answers the file, not an envelope (contract section 15).
    expect(res.headers.get('x-request-id'), what).toMatch(REQUEST_ID);
    expect(res.headers.get('content-disposition'), what).toMatch(/^attachment; filename=/);
    succeeded.add(`${method} ${template}`);
    return res;
  }
  assertCommon(res, what);
  assertConforms(method, template, res);
  if (status < 300) {
    expect(res.body.code, what).toBe(0);
    succeeded.add(`${method} ${template}`);
  } else {
    expect(res.body.code, what).toBe(status);
    failed.add(`${method} ${template} ${status}`);
  }
  return res;
}

/** Sends a package as multipart/form-data (a `file` part) or as an application/zip body; answers like c.request. */
async function sendUpload(method: Method, url: string, opts: CallOpts): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? c.adminToken : opts.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: BodyInit;
  if (opts.upload instanceof FormData) body = opts.upload;
  else if (opts.zip) {
    headers['content-type'] = 'application/zip';
    body = new Uint8Array(opts.upload!);
  } else {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(opts.upload!)], { type: 'application/zip' }), 'plugin.stplugin.zip');
    body = form;
  }
  return send((r) => c.app.fetch(r), method, `http://test.local${url}`, { raw: body, headers: { ...headers, ...opts.headers } });
}

/** The exact v1 error envelope, with the request id taken from the header. */
function errorBody(res: TestResponse, status: number, error: string, msg: unknown, details?: unknown) {
  return {
    code: status,
    msg: msg instanceof RegExp ? expect.stringMatching(msg) : msg,
    error,
    data: null,
    request_id: res.headers.get('x-request-id'),
    ...(details === undefined ? {} : { details }),
  };
}

/** `msg` is the exact message, a RegExp it matches, or an asymmetric matcher. */
function expectError(res: TestResponse, status: number, error: string, msg: unknown, details?: unknown) {
  expect(res.body).toEqual(errorBody(res, status, error, msg, details));
}

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'a=b', 'x-upstream': 'yes' });
    res.end(JSON.stringify({ method: req.method, url: req.url }));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamPort = (upstream.address() as AddressInfo).port;
  c = await makeApp({ PLUGIN_PROXY_ALLOW_PRIVATE: `127.0.0.1:${upstreamPort}` });
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
});
afterAll(async () => {
  await c?.close();
  await new Promise((r) => upstream?.close(r));
});

describe('the OpenAPI document', () => {
  it('is served at /api/v1/openapi.json without a token and passes a standard OpenAPI validator', async () => {
    const res = await c.request('GET', '/api/v1/openapi.json', { token: null });
    expect(res.status).toBe(200);
    assertCommon(res, 'GET /api/v1/openapi.json');
    doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toEqual({ title: 'Table Service API v1', version: expect.any(String) });
    expect(doc.servers).toEqual([{ url: 'http://test.local' }]);
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
    ajv.addSchema({ $id: DOC_ID, components: doc.components });
  });

  it('lists exactly the routes of the route table, each with its parameters, success status and security', () => {
    const inDoc = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    // The attachment content route streams the bytes outside the route table (src/attachment-http.ts); the document adds it.
    const inTable = [...routes.map((r) => `${r.method} ${r.path}`), 'GET /api/v1/attachments/{attachment_id}/content'].sort();
    expect(new Set(inTable).size, 'the route table has a duplicate method and path').toBe(inTable.length);
    expect(inDoc).toEqual(inTable);

    const operationIds = new Set<string>();
    for (const route of routes) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      const where = `${route.method} ${route.path}`;
      expect(op.summary, where).toBe(route.summary);
      expect(operationIds.has(op.operationId), `${where}: duplicate operationId ${op.operationId}`).toBe(false);
      operationIds.add(op.operationId);
      const pathParams = op.parameters.filter((p: any) => p.in === 'path').map((p: any) => p.name);
      expect(pathParams, where).toEqual([...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
      const queryParams = op.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name);
      expect(queryParams, where).toEqual(Object.keys(route.query ?? {}));
      const success = String(route.status ?? 200);
      // Writes under /api/v1 and /api/open/v1 take an Idempotency-Key and may answer 422 (contract section 14).
      const idempotent = route.method !== 'GET' && /^\/api\/(v1|open\/v1)\//.test(route.path);
      expect(op.parameters.some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key'), `${where}: Idempotency-Key`).toBe(idempotent);
      expect(Object.keys(op.responses).sort(), where).toEqual([success, '400', '401', '403', '404', '405', '409', '413', '429', '500', '502', '504', ...(idempotent ? ['422'] : [])].sort());
      // An export streams the file itself (contract section 15); every other success is the envelope.
      if (route.download) expect(Object.keys(op.responses[success].content).sort(), where).toEqual(['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/csv']);
      else expect(op.responses[success].content['application/json'].schema.properties.data, where).toEqual(route.response);
      expect(op.requestBody !== undefined, `${where}: requestBody`).toBe(route.body !== undefined || route.bodyFormat === 'upload' || route.bodyFormat === 'spool');
      if (route.bodyFormat === 'spool') {
        // An import (contract section 15): a multipart `file` part and an optional `options` part.
        expect(Object.keys(op.requestBody.content), where).toEqual(['multipart/form-data']);
        expect(op.requestBody.content['multipart/form-data'].schema, where).toMatchObject({ required: ['file'], properties: { file: { type: 'string', format: 'binary' }, options: { type: 'string' } } });
      }
      if (route.bodyFormat === 'upload') {
        // A package upload (contract section 7): a multipart `file` part, or the zip itself as the body.
        expect(route.body, `${where}: an upload has no JSON body schema`).toBeUndefined();
        expect(op.requestBody.required, where).toBe(true);
        expect(Object.keys(op.requestBody.content).sort(), where).toEqual(['application/zip', 'multipart/form-data']);
        const multipart = op.requestBody.content['multipart/form-data'].schema;
        expect(multipart, where).toMatchObject({ type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } });
        expect(op.requestBody.content['application/zip'].schema, where).toEqual({ type: 'string', format: 'binary' });
      } else if (route.body !== undefined) {
        expect(op.requestBody, where).toEqual({ required: true, content: { 'application/json': { schema: route.body } } });
      }
      if (route.auth === false) expect(op.security, where).toEqual([]);
      else expect(op.security, where).toBeUndefined();
    }
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('its schemas can fail: a damaged answer does not conform', () => {
    const user = { id: 'usr1', email: 'a@b.c', name: 'A', is_admin: false, default_base_id: null, created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-01T00:00:00.000Z' };
    const ok = validatorFor('GET /api/v1/users/{user_id} 200', responseSchema('GET', '/api/v1/users/{user_id}', 200));
    expect(ok({ code: 0, msg: 'success', data: user })).toBe(true);
    expect(ok({ code: 0, msg: 'success', data: { ...user, email: undefined } })).toBe(false);
    expect(ok({ code: 0, msg: 'success', data: { ...user, extra: 1 } })).toBe(false);
    expect(ok({ code: 0, msg: 'success', data: { ...user, created_at: 'yesterday' } })).toBe(false);
    expect(ok({ code: 1, msg: 'success', data: user })).toBe(false);
    const err = validatorFor('GET /api/v1/users/{user_id} 404', responseSchema('GET', '/api/v1/users/{user_id}', 404));
    expect(err({ code: 404, msg: 'x', error: 'NOT_FOUND', data: null, request_id: 'r' })).toBe(true);
    expect(err({ code: 404, msg: 'x', error: 'NOT_FOUND', data: null })).toBe(false);
  });
});

describe('answers conform to the document', () => {
  const S: Record<string, string> = {};
  let userToken = '';
  let viewerToken = '';

  it('auth: login, me, logout and their errors', async () => {
    const login = await call('POST', '/api/auth/login', {}, 200, { token: null, body: { email: ADMIN.email, password: ADMIN.password } });
    expect(login.body.data).toEqual({
      token: expect.any(String), token_type: 'Bearer', expires_in: 86400,
      user: { id: expect.stringMatching(/^usr/), email: ADMIN.email, name: expect.any(String), is_admin: true, default_base_id: expect.stringMatching(/^bse/), created_at: TIME, updated_at: TIME },
    });
    const token = login.body.data.token as string;
    S.admin = login.body.data.user.id;

    const me = await call('GET', '/api/auth/me', {}, 200, { token });
    expect(me.body).toEqual({ code: 0, msg: 'success', data: login.body.data.user });

    const wrong = await call('POST', '/api/auth/login', {}, 401, { token: null, body: { email: ADMIN.email, password: 'not-the-password' } });
    expectError(wrong, 401, 'UNAUTHORIZED', 'Wrong email or password');
    const unknown = await call('POST', '/api/auth/login', {}, 401, { token: null, body: { email: 'nobody@test.local', password: 'not-the-password' } });
    expectError(unknown, 401, 'UNAUTHORIZED', 'Wrong email or password');

    const missing = await call('POST', '/api/auth/login', {}, 400, { token: null, body: { email: ADMIN.email } });
    expectError(missing, 400, 'BAD_REQUEST', '"password" is required', [{ field: 'password', message: '"password" is required' }]);
    const extra = await call('POST', '/api/auth/login', {}, 400, { token: null, body: { email: ADMIN.email, password: 'x', remember: true } });
    expectError(extra, 400, 'BAD_REQUEST', 'unknown property "remember"', [{ field: 'remember', message: 'unknown property "remember"' }]);
    const malformed = await call('POST', '/api/auth/login', {}, 400, { token: null, raw: '{"email":', headers: { 'content-type': 'application/json' } });
    expectError(malformed, 400, 'BAD_REQUEST', /^Malformed JSON body/);

    const anonymous = await call('GET', '/api/auth/me', {}, 401, { token: null });
    expectError(anonymous, 401, 'UNAUTHORIZED', 'Authentication required');
    const garbage = await call('GET', '/api/auth/me', {}, 401, { token: 'not.a.jwt' });
    expectError(garbage, 401, 'UNAUTHORIZED', 'The token is invalid');
    const scheme = await call('GET', '/api/auth/me', {}, 401, { token: null, headers: { authorization: 'Basic YTpi' } });
    expectError(scheme, 401, 'UNAUTHORIZED', 'The Authorization header must be "Bearer <token>"');

    const logout = await call('POST', '/api/auth/logout', {}, 200, { token });
    expect(logout.body).toEqual({ code: 0, msg: 'success', data: { logged_out: true } });
    const revoked = await call('GET', '/api/auth/me', {}, 401, { token });
    expectError(revoked, 401, 'UNAUTHORIZED', 'The token has been revoked');
    const again = await call('POST', '/api/auth/logout', {}, 401, { token });
    expectError(again, 401, 'UNAUTHORIZED', 'The token has been revoked');
    // The admin token of the other tests still works.
    await call('GET', '/api/auth/me', {}, 200);
  });

  it('users: list, create, read, update, delete and their errors', async () => {
    const created = await call('POST', '/api/v1/users', {}, 201, { body: { email: 'Ola@Test.Local', name: 'Ola', password: 'password-123' } });
    const ola = created.body.data;
    expect(ola).toEqual({
      id: expect.stringMatching(/^usr/), email: 'ola@test.local', name: 'Ola', is_admin: false,
      default_base_id: expect.stringMatching(/^bse/), created_at: TIME, updated_at: TIME,
    });
    S.user = ola.id;
    S.userBase = ola.default_base_id;
    userToken = (await call('POST', '/api/auth/login', {}, 200, { token: null, body: { email: 'ola@test.local', password: 'password-123' } })).body.data.token;

    const viewer = await call('POST', '/api/v1/users', {}, 201, { body: { email: 'vic@test.local', name: 'Vic', password: 'password-123', is_admin: false } });
    S.viewer = viewer.body.data.id;
    viewerToken = (await call('POST', '/api/auth/login', {}, 200, { token: null, body: { email: 'vic@test.local', password: 'password-123' } })).body.data.token;

    const list = await call('GET', '/api/v1/users', {}, 200, { query: 'page=1&page_size=2' });
    expect(list.body.data).toEqual({ items: [expect.objectContaining({ id: S.admin }), ola], total: 3, page: 1, page_size: 2 });
    const page2 = await call('GET', '/api/v1/users', {}, 200, { query: 'page=2&page_size=2' });
    expect(page2.body.data.items.map((u: any) => u.id)).toEqual([S.viewer]);

    const one = await call('GET', '/api/v1/users/{user_id}', { user_id: S.user }, 200);
    expect(one.body.data).toEqual(ola);

    const renamed = await call('PUT', '/api/v1/users/{user_id}', { user_id: S.user }, 200, { body: { name: 'Ola N.' } });
    expect(renamed.body.data).toEqual({ ...ola, name: 'Ola N.', updated_at: TIME });

    const dup = await call('POST', '/api/v1/users', {}, 409, { body: { email: 'vic@test.local', name: 'Other', password: 'password-123' } });
    expectError(dup, 409, 'CONFLICT', 'A user with email vic@test.local already exists');
    const noName = await call('POST', '/api/v1/users', {}, 400, { body: { email: 'x@test.local', password: 'password-123' } });
    expectError(noName, 400, 'BAD_REQUEST', '"name" is required', [{ field: 'name', message: '"name" is required' }]);
    const badType = await call('PUT', '/api/v1/users/{user_id}', { user_id: S.user }, 400, { body: { is_admin: 'yes' } });
    expectError(badType, 400, 'BAD_REQUEST', '"is_admin" must be boolean', [{ field: 'is_admin', message: '"is_admin" must be boolean' }]);
    const lastAdmin = await call('DELETE', '/api/v1/users/{user_id}', { user_id: S.admin }, 409);
    expectError(lastAdmin, 409, 'CONFLICT', 'The last system administrator cannot be deleted');

    const forbidden = await call('GET', '/api/v1/users', {}, 403, { token: userToken });
    expectError(forbidden, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const forbiddenWrite = await call('POST', '/api/v1/users', {}, 403, { token: userToken, body: { email: 'y@test.local', name: 'Y', password: 'password-123' } });
    expectError(forbiddenWrite, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const anonymous = await call('GET', '/api/v1/users/{user_id}', { user_id: S.user }, 401, { token: null });
    expectError(anonymous, 401, 'UNAUTHORIZED', 'Authentication required');

    const temp = await call('POST', '/api/v1/users', {}, 201, { body: { email: 'temp@test.local', name: 'Temp', password: 'password-123' } });
    const gone = await call('DELETE', '/api/v1/users/{user_id}', { user_id: temp.body.data.id }, 200);
    expect(gone.body).toEqual({ code: 0, msg: 'success', data: { id: temp.body.data.id, deleted: true } });
    const missing = await call('GET', '/api/v1/users/{user_id}', { user_id: temp.body.data.id }, 404);
    expectError(missing, 404, 'NOT_FOUND', expect.stringContaining(temp.body.data.id));
    await call('DELETE', '/api/v1/users/{user_id}', { user_id: temp.body.data.id }, 404);
  });

  it('bases and members: list, create, read, update, members, delete and their errors', async () => {
    const created = await call('POST', '/api/v1/bases', {}, 201, { token: userToken, body: { name: 'Projects', description: 'Work' } });
    const base = created.body.data;
    expect(base).toEqual({ id: expect.stringMatching(/^bse/), name: 'Projects', description: 'Work', role: 'owner', created_at: TIME, updated_at: TIME });
    S.base = base.id;
    const bare = await call('POST', '/api/v1/bases', {}, 201, { token: userToken, body: { name: 'Scratch' } });
    expect(bare.body.data).toMatchObject({ name: 'Scratch', description: '', role: 'owner' });

    const list = await call('GET', '/api/v1/bases', {}, 200, { token: userToken });
    expect(list.body.data).toEqual({
      items: [expect.objectContaining({ id: S.userBase, name: 'My base', role: 'owner' }), base, bare.body.data], total: 3, page: 1, page_size: 20,
    });
    const one = await call('GET', '/api/v1/bases/{base_id}', { base_id: S.base }, 200, { token: userToken });
    expect(one.body.data).toEqual(base);
    const updated = await call('PUT', '/api/v1/bases/{base_id}', { base_id: S.base }, 200, { token: userToken, body: { name: 'Projects 2', description: 'Work and more' } });
    expect(updated.body.data).toEqual({ ...base, name: 'Projects 2', description: 'Work and more', updated_at: TIME });
    S.baseName = 'Projects 2';

    const members = await call('GET', '/api/v1/bases/{base_id}/members', { base_id: S.base }, 200, { token: userToken });
    expect(members.body.data).toEqual([{ user_id: S.user, email: 'ola@test.local', name: 'Ola N.', role: 'owner', created_at: TIME }]);
    const added = await call('PUT', '/api/v1/bases/{base_id}/members/{user_id}', { base_id: S.base, user_id: S.viewer }, 200, { token: userToken, body: { role: 'editor' } });
    expect(added.body.data).toEqual({ user_id: S.viewer, email: 'vic@test.local', name: 'Vic', role: 'editor', created_at: TIME });
    const changed = await call('PUT', '/api/v1/bases/{base_id}/members/{user_id}', { base_id: S.base, user_id: S.viewer }, 200, { token: userToken, body: { role: 'viewer' } });
    expect(changed.body.data).toMatchObject({ user_id: S.viewer, role: 'viewer' });
    const both = await call('GET', '/api/v1/bases/{base_id}/members', { base_id: S.base }, 200, { token: viewerToken });
    expect(both.body.data.map((m: any) => [m.user_id, m.role])).toEqual([[S.user, 'owner'], [S.viewer, 'viewer']]);

    const badRole = await call('PUT', '/api/v1/bases/{base_id}/members/{user_id}', { base_id: S.base, user_id: S.viewer }, 400, { token: userToken, body: { role: 'boss' } });
    expectError(badRole, 400, 'BAD_REQUEST', '"role" must be equal to one of the allowed values', [{ field: 'role', message: '"role" must be equal to one of the allowed values' }]);
    const noName = await call('POST', '/api/v1/bases', {}, 400, { token: userToken, body: { description: 'x' } });
    expectError(noName, 400, 'BAD_REQUEST', '"name" is required', [{ field: 'name', message: '"name" is required' }]);
    const blank = await call('POST', '/api/v1/bases', {}, 400, { token: userToken, body: { name: '  ' } });
    expectError(blank, 400, 'BAD_REQUEST', 'name must be 1 to 255 characters', [{ field: 'name', message: 'must be 1 to 255 characters' }]);
    const viewerWrite = await call('PUT', '/api/v1/bases/{base_id}', { base_id: S.base }, 403, { token: viewerToken, body: { name: 'Mine' } });
    expectError(viewerWrite, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const outsider = await call('GET', '/api/v1/bases/{base_id}', { base_id: S.userBase }, 403, { token: viewerToken });
    expectError(outsider, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const missing = await call('GET', '/api/v1/bases/{base_id}', { base_id: 'bsenope' }, 404, { token: userToken });
    expectError(missing, 404, 'NOT_FOUND', 'Base bsenope not found');
    const lastOwner = await call('DELETE', '/api/v1/bases/{base_id}/members/{user_id}', { base_id: S.base, user_id: S.user }, 409, { token: userToken });
    expectError(lastOwner, 409, 'CONFLICT', 'A base must keep at least one owner');

    const removed = await call('DELETE', '/api/v1/bases/{base_id}/members/{user_id}', { base_id: bare.body.data.id, user_id: S.user }, 409, { token: userToken });
    expectError(removed, 409, 'CONFLICT', 'A base must keep at least one owner');
    await call('PUT', '/api/v1/bases/{base_id}/members/{user_id}', { base_id: bare.body.data.id, user_id: S.viewer }, 200, { token: userToken, body: { role: 'editor' } });
    const out = await call('DELETE', '/api/v1/bases/{base_id}/members/{user_id}', { base_id: bare.body.data.id, user_id: S.viewer }, 200, { token: userToken });
    expect(out.body).toEqual({ code: 0, msg: 'success', data: { user_id: S.viewer, removed: true } });

    const deleted = await call('DELETE', '/api/v1/bases/{base_id}', { base_id: bare.body.data.id }, 200, { token: userToken });
    expect(deleted.body).toEqual({ code: 0, msg: 'success', data: { id: bare.body.data.id, deleted: true } });
    const deletedAgain = await call('DELETE', '/api/v1/bases/{base_id}', { base_id: bare.body.data.id }, 404, { token: userToken });
    expectError(deletedAgain, 404, 'NOT_FOUND', `Base ${bare.body.data.id} not found`);
  });

  // PUT bodies name only the keys that change (contract: "absent keys stay as they are").
  it('PUT of a base with only a description keeps its name', async () => {
    const res = await call('PUT', '/api/v1/bases/{base_id}', { base_id: S.base }, 200, { token: userToken, body: { description: 'Only the description' } });
    expect(res.body.data).toMatchObject({ id: S.base, name: S.baseName, description: 'Only the description' });
  });

  it('PUT of a base with only a name keeps its description', async () => {
    const before = (await call('GET', '/api/v1/bases/{base_id}', { base_id: S.base }, 200, { token: userToken })).body.data;
    const res = await call('PUT', '/api/v1/bases/{base_id}', { base_id: S.base }, 200, { token: userToken, body: { name: S.baseName } });
    expect(res.body.data).toMatchObject({ id: S.base, name: S.baseName, description: before.description });
    expect(before.description).not.toBe('');
  });

  it('PUT of a table with only a description keeps its name', async () => {
    const scratch = await call('POST', '/api/v1/tables', {}, 201, { token: userToken, body: { base_id: S.userBase, name: 'Partial 1', description: 'd' } });
    const res = await call('PUT', '/api/v1/tables/{table_id}', { table_id: scratch.body.data.id }, 200, { token: userToken, body: { description: 'Only the description' } });
    expect(res.body.data).toMatchObject({ id: scratch.body.data.id, name: 'Partial 1', description: 'Only the description' });
  });

  it('PUT of a table with only a name keeps its description', async () => {
    const scratch = await call('POST', '/api/v1/tables', {}, 201, { token: userToken, body: { base_id: S.userBase, name: 'Partial 2', description: 'kept' } });
    const res = await call('PUT', '/api/v1/tables/{table_id}', { table_id: scratch.body.data.id }, 200, { token: userToken, body: { name: 'Partial 2b' } });
    expect(res.body.data).toMatchObject({ id: scratch.body.data.id, name: 'Partial 2b', description: 'kept' });
  });

  it('tables and fields: list, create, read, update, delete and their errors', async () => {
    const other = await call('POST', '/api/v1/tables', {}, 201, { token: userToken, body: { base_id: S.base, name: 'Clients', fields: [{ name: 'Name', type: 'text' }] } });
    S.clients = other.body.data.id;
    const created = await call('POST', '/api/v1/tables', {}, 201, {
      token: userToken,
      body: {
        base_id: S.base, name: 'Tasks', description: 'All tasks',
        fields: [
          { name: 'Name', type: 'text', required: true, indexed: true },
          { name: 'Notes', type: 'long_text' },
          { name: 'Budget', type: 'number', config: { precision: 2 } },
          { name: 'Due', type: 'date' },
          { name: 'Status', type: 'single_select', options: ['todo', 'doing', 'done'] },
          { name: 'Tags', type: 'multi_select', options: ['a', 'b', 'c'] },
          { name: 'Done', type: 'checkbox' },
          { name: 'Owner', type: 'user' },
          { name: 'Client', type: 'link', config: { table_id: S.clients } },
          { name: 'Email', type: 'email' },
          { name: 'Site', type: 'url' },
          { name: 'Phone', type: 'phone' },
          { name: 'Score', type: 'rating', config: { max: 10 } },
          { name: 'Created', type: 'created_time' },
          { name: 'Modified', type: 'last_modified_time' },
          { name: 'No', type: 'autonumber' },
        ],
      },
    });
    const table = created.body.data;
    expect(table).toEqual({ id: expect.stringMatching(/^tbl/), base_id: S.base, name: 'Tasks', description: 'All tasks', created_at: TIME, updated_at: TIME });
    S.table = table.id;

    const list = await call('GET', '/api/v1/tables', {}, 200, { token: userToken, query: `base_id=${S.base}` });
    expect(list.body.data).toEqual({ items: [other.body.data, table], total: 2, page: 1, page_size: 20 });
    const everywhere = await call('GET', '/api/v1/tables', {}, 200, { token: viewerToken });
    expect(everywhere.body.data.items.map((t: any) => t.id)).toEqual([S.clients, S.table]);
    const one = await call('GET', '/api/v1/tables/{table_id}', { table_id: S.table }, 200, { token: viewerToken });
    expect(one.body.data).toEqual(table);
    const renamed = await call('PUT', '/api/v1/tables/{table_id}', { table_id: S.table }, 200, { token: userToken, body: { name: 'Task list', description: 'Every task' } });
    expect(renamed.body.data).toEqual({ ...table, name: 'Task list', description: 'Every task', updated_at: TIME });

    const log = await call('GET', '/api/v1/bases/{base_id}/events', { base_id: S.base }, 200, { token: userToken, query: 'limit=5' });
    expect(log.body.data.items.length).toBeGreaterThan(0);
    await call('GET', '/api/v1/bases/{base_id}/events', { base_id: S.base }, 400, { token: userToken, query: 'limit=0' });
    await call('GET', '/api/v1/bases/{base_id}/events', { base_id: S.base }, 403, { token: viewerToken });
    const fields = await call('GET', '/api/v1/tables/{table_id}/fields', { table_id: S.table }, 200, { token: viewerToken });
    expect(fields.body.data).toMatchObject({ total: 16, page: 1, page_size: 50 });
    expect(fields.body.data.items.map((f: any) => [f.name, f.type])).toEqual([
      ['Name', 'text'], ['Notes', 'long_text'], ['Budget', 'number'], ['Due', 'date'], ['Status', 'single_select'], ['Tags', 'multi_select'],
      ['Done', 'checkbox'], ['Owner', 'user'], ['Client', 'link'], ['Email', 'email'], ['Site', 'url'], ['Phone', 'phone'], ['Score', 'rating'],
      ['Created', 'created_time'], ['Modified', 'last_modified_time'], ['No', 'autonumber'],
    ]);
    const byName = Object.fromEntries(fields.body.data.items.map((f: any) => [f.name, f]));
    expect(byName.Name).toEqual({ id: expect.stringMatching(/^fld/), table_id: S.table, name: 'Name', type: 'text', required: true, options: null, config: {}, indexed: true, computing: null });
    expect(byName.Status).toMatchObject({ options: ['todo', 'doing', 'done'], config: {} });
    expect(byName.Client).toMatchObject({ options: null, config: { table_id: S.clients } });
    expect(byName.Budget.config).toEqual({ precision: 2 });
    expect(byName.Score.config).toEqual({ max: 10 });
    const paged = await call('GET', '/api/v1/tables/{table_id}/fields', { table_id: S.table }, 200, { token: viewerToken, query: 'page=2&page_size=10' });
    expect(paged.body.data.items.map((f: any) => f.name)).toEqual(['Site', 'Phone', 'Score', 'Created', 'Modified', 'No']);

    const added = await call('POST', '/api/v1/tables/{table_id}/fields', { table_id: S.table }, 201, { token: userToken, body: { name: 'Priority', type: 'single_select', options: ['low', 'high'] } });
    expect(added.body.data).toEqual({ id: expect.stringMatching(/^fld/), table_id: S.table, name: 'Priority', type: 'single_select', required: false, options: ['low', 'high'], config: {}, indexed: false, computing: null });
    const changed = await call('PUT', '/api/v1/tables/{table_id}/fields/{field_id}', { table_id: S.table, field_id: added.body.data.id }, 200, {
      token: userToken, body: { name: 'Urgency', options: ['low', 'mid', 'high'], indexed: true },
    });
    expect(changed.body.data).toEqual({ ...added.body.data, name: 'Urgency', options: ['low', 'mid', 'high'], indexed: true });
    const dropped = await call('DELETE', '/api/v1/tables/{table_id}/fields/{field_id}', { table_id: S.table, field_id: added.body.data.id }, 200, { token: userToken });
    expect(dropped.body).toEqual({ code: 0, msg: 'success', data: { id: added.body.data.id, deleted: true } });

    const dupTable = await call('POST', '/api/v1/tables', {}, 409, { token: userToken, body: { base_id: S.base, name: 'Clients' } });
    expectError(dupTable, 409, 'CONFLICT', 'A table named "Clients" already exists in this base');
    const dupField = await call('POST', '/api/v1/tables/{table_id}/fields', { table_id: S.table }, 409, { token: userToken, body: { name: 'Notes', type: 'text' } });
    expectError(dupField, 409, 'CONFLICT', 'A field named "Notes" already exists in this table');
    const noType = await call('POST', '/api/v1/tables/{table_id}/fields', { table_id: S.table }, 400, { token: userToken, body: { name: 'X' } });
    expectError(noType, 400, 'BAD_REQUEST', '"type" is required', [{ field: 'type', message: '"type" is required' }]);
    const badFieldInTable = await call('POST', '/api/v1/tables', {}, 400, { token: userToken, body: { base_id: S.base, name: 'Broken', fields: [{ name: 'A', type: 'text' }, { name: 'B' }] } });
    expectError(badFieldInTable, 400, 'BAD_REQUEST', '"fields.1.type" is required', [{ field: 'fields.1.type', message: '"fields.1.type" is required' }]);
    const viewerField = await call('POST', '/api/v1/tables/{table_id}/fields', { table_id: S.table }, 403, { token: viewerToken, body: { name: 'X', type: 'text' } });
    expectError(viewerField, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const viewerTable = await call('DELETE', '/api/v1/tables/{table_id}', { table_id: S.table }, 403, { token: viewerToken });
    expectError(viewerTable, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const missing = await call('GET', '/api/v1/tables/{table_id}', { table_id: 'tblnope' }, 404, { token: userToken });
    expectError(missing, 404, 'NOT_FOUND', 'Table tblnope not found');
    const missingFields = await call('GET', '/api/v1/tables/{table_id}/fields', { table_id: 'tblnope' }, 404, { token: userToken });
    expectError(missingFields, 404, 'NOT_FOUND', 'Table tblnope not found');
    const badPage = await call('GET', '/api/v1/tables/{table_id}/fields', { table_id: S.table }, 400, { token: userToken, query: 'page=abc' });
    expectError(badPage, 400, 'BAD_REQUEST', 'page must be a positive integer', [{ field: 'page', message: 'must be a positive integer' }]);

    const scratch = await call('POST', '/api/v1/tables', {}, 201, { token: userToken, body: { base_id: S.base, name: 'Scratch' } });
    const gone = await call('DELETE', '/api/v1/tables/{table_id}', { table_id: scratch.body.data.id }, 200, { token: userToken });
    expect(gone.body).toEqual({ code: 0, msg: 'success', data: { id: scratch.body.data.id, deleted: true } });
    await call('GET', '/api/v1/tables/{table_id}', { table_id: scratch.body.data.id }, 404, { token: userToken });
  });

  it('records: list, create, read, update, delete, batches and their errors', async () => {
    const t = { table_id: S.table };
    const client = await call('POST', '/api/v1/tables/{table_id}/records', { table_id: S.clients }, 201, { token: userToken, body: { fields: { Name: 'ACME' } } });
    const clientId = client.body.data.id;

    const created = await call('POST', '/api/v1/tables/{table_id}/records', t, 201, {
      token: userToken,
      body: {
        fields: {
          Name: 'Write spec', Notes: 'Long\ntext', Budget: 12.345, Due: '2024-05-01', Status: 'doing', Tags: ['a', 'c'], Done: true,
          Owner: S.viewer, Client: [clientId], Email: 'ola@test.local', Site: 'https://example.com/x', Phone: '+1 (555) 010-0100', Score: 7,
        },
      },
    });
    const record = created.body.data;
    expect(record).toEqual({
      id: expect.stringMatching(/^rec/), created_at: TIME, updated_at: record.created_at,
      fields: {
        Name: 'Write spec', Notes: 'Long\ntext', Budget: 12.35, Due: '2024-05-01', Status: 'doing', Tags: ['a', 'c'], Done: true,
        Owner: S.viewer, Client: [clientId], Email: 'ola@test.local', Site: 'https://example.com/x', Phone: '+1 (555) 010-0100', Score: 7,
        Created: record.created_at, Modified: record.created_at, No: 1,
      },
    });
    const empty = await call('POST', '/api/v1/tables/{table_id}/records', t, 201, { token: userToken, body: { fields: { Name: 'Empty one' } } });
    S.empty = empty.body.data.id;
    // Client (link) is checked on its own below.
    expect({ ...empty.body.data.fields, Client: null }).toEqual({
      Name: 'Empty one', Notes: null, Budget: null, Due: null, Status: null, Tags: null, Done: false, Owner: null, Client: null,
      Email: null, Site: null, Phone: null, Score: null, Created: empty.body.data.created_at, Modified: empty.body.data.created_at, No: 2,
    });

    const one = await call('GET', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: record.id }, 200, { token: viewerToken });
    expect(one.body.data).toEqual(record);
    const updated = await call('PUT', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: record.id }, 200, { token: userToken, body: { fields: { Status: 'done', Tags: null } } });
    expect(updated.body.data).toEqual({
      ...record, updated_at: TIME, fields: { ...record.fields, Status: 'done', Tags: null, Modified: updated.body.data.updated_at },
    });

    const list = await call('GET', '/api/v1/tables/{table_id}/records', t, 200, { token: viewerToken });
    expect(list.body.data).toEqual({ items: [updated.body.data, empty.body.data], total: 2, page: 1, page_size: 20 });
    const filter = encodeURIComponent(JSON.stringify({ conjunction: 'and', conditions: [{ field: 'Status', operator: 'eq', value: 'done' }] }));
    const sort = encodeURIComponent(JSON.stringify([{ field: 'No', direction: 'desc' }]));
    const filtered = await call('GET', '/api/v1/tables/{table_id}/records', t, 200, { token: viewerToken, query: `filter=${filter}&sort=${sort}&page_size=1` });
    expect(filtered.body.data).toEqual({ items: [updated.body.data], total: 1, page: 1, page_size: 1 });
    const sorted = await call('GET', '/api/v1/tables/{table_id}/records', t, 200, { token: viewerToken, query: `sort=${sort}` });
    expect(sorted.body.data.items.map((r: any) => r.id)).toEqual([empty.body.data.id, record.id]);

    const batch = await call('POST', '/api/v1/tables/{table_id}/records/batch', t, 200, {
      token: userToken, body: { action: 'create', records: [{ fields: { Name: 'b1', Score: 1 } }, { fields: { Name: 'b2', Score: 2 } }] },
    });
    expect(batch.body.data.items.map((r: any) => [r.fields.Name, r.fields.Score, r.fields.No])).toEqual([['b1', 1, 3], ['b2', 2, 4]]);
    const ids = batch.body.data.items.map((r: any) => r.id);
    const batchUpdate = await call('POST', '/api/v1/tables/{table_id}/records/batch', t, 200, {
      token: userToken, body: { action: 'update', records: [{ id: ids[0], fields: { Score: 5 } }, { id: ids[1], fields: { Done: true } }] },
    });
    expect(batchUpdate.body.data.items.map((r: any) => [r.id, r.fields.Score, r.fields.Done])).toEqual([[ids[0], 5, false], [ids[1], 2, true]]);
    const batchDelete = await call('POST', '/api/v1/tables/{table_id}/records/batch', t, 200, { token: userToken, body: { action: 'delete', records: ids.map((id: string) => ({ id })) } });
    expect(batchDelete.body).toEqual({ code: 0, msg: 'success', data: { deleted: ids } });

    const wrongValue = await call('POST', '/api/v1/tables/{table_id}/records', t, 400, { token: userToken, body: { fields: { Name: 'x', Budget: 'lots' } } });
    expectError(wrongValue, 400, 'BAD_REQUEST', /Budget/, [{ field: 'Budget', message: 'field "Budget": expected a number, got a string' }]);
    const unknownField = await call('POST', '/api/v1/tables/{table_id}/records', t, 400, { token: userToken, body: { fields: { Name: 'x', Nope: 1 } } });
    expect(unknownField.body).toMatchObject({ error: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'Nope' })] });
    const readOnly = await call('PUT', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: record.id }, 400, { token: userToken, body: { fields: { No: 9 } } });
    expect(readOnly.body).toMatchObject({ error: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'No' })] });
    const requiredMissing = await call('POST', '/api/v1/tables/{table_id}/records', t, 400, { token: userToken, body: { fields: { Notes: 'no name' } } });
    expect(requiredMissing.body).toMatchObject({ error: 'BAD_REQUEST', details: [expect.objectContaining({ field: 'Name' })] });
    const noFields = await call('POST', '/api/v1/tables/{table_id}/records', t, 400, { token: userToken, body: {} });
    expectError(noFields, 400, 'BAD_REQUEST', '"fields" is required', [{ field: 'fields', message: '"fields" is required' }]);
    const badBatch = await call('POST', '/api/v1/tables/{table_id}/records/batch', t, 400, { token: userToken, body: { action: 'create', records: [{ fields: { Name: 'ok' } }, { fields: { Score: 99 } }] } });
    expect(badBatch.body).toMatchObject({ error: 'BAD_REQUEST', details: [expect.objectContaining({ index: 1 })] });
    const badAction = await call('POST', '/api/v1/tables/{table_id}/records/batch', t, 400, { token: userToken, body: { action: 'upsert', records: [] } });
    expectError(badAction, 400, 'BAD_REQUEST', '"action" must be equal to one of the allowed values', [{ field: 'action', message: '"action" must be equal to one of the allowed values' }]);
    const badFilter = await call('GET', '/api/v1/tables/{table_id}/records', t, 400, { token: userToken, query: 'filter=%7Bnot-json' });
    expect(badFilter.body).toMatchObject({ error: 'BAD_REQUEST', msg: expect.stringContaining('filter') });
    const badSort = await call('GET', '/api/v1/tables/{table_id}/records', t, 400, { token: userToken, query: `sort=${encodeURIComponent(JSON.stringify([{ field: 'Name', direction: 'up' }]))}` });
    expect(badSort.body).toMatchObject({ error: 'BAD_REQUEST', msg: expect.stringContaining('sort') });
    const missingBatch = await call('POST', '/api/v1/tables/{table_id}/records/batch', t, 404, { token: userToken, body: { action: 'delete', records: [{ id: record.id }, { id: 'recnope' }] } });
    expect(missingBatch.body).toMatchObject({ error: 'NOT_FOUND', details: [expect.objectContaining({ index: 1 })] });
    await call('GET', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: record.id }, 200, { token: userToken });

    const viewerWrite = await call('POST', '/api/v1/tables/{table_id}/records', t, 403, { token: viewerToken, body: { fields: { Name: 'x' } } });
    expectError(viewerWrite, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const viewerBatch = await call('POST', '/api/v1/tables/{table_id}/records/batch', t, 403, { token: viewerToken, body: { action: 'delete', records: [{ id: record.id }] } });
    expectError(viewerBatch, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const anonymous = await call('GET', '/api/v1/tables/{table_id}/records', t, 401, { token: null });
    expectError(anonymous, 401, 'UNAUTHORIZED', 'Authentication required');
    const noRecord = await call('GET', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: 'recnope' }, 404, { token: userToken });
    expect(noRecord.body).toMatchObject({ error: 'NOT_FOUND', msg: expect.stringContaining('recnope') });
    const noTable = await call('POST', '/api/v1/tables/{table_id}/records', { table_id: 'tblnope' }, 404, { token: userToken, body: { fields: {} } });
    expectError(noTable, 404, 'NOT_FOUND', 'Table tblnope not found');

    const del = await call('DELETE', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: empty.body.data.id }, 200, { token: userToken });
    expect(del.body).toEqual({ code: 0, msg: 'success', data: { id: empty.body.data.id, deleted: true } });
    await call('DELETE', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: empty.body.data.id }, 404, { token: userToken });
    // The trash (contract section 16): the deleted record is there, restores, and a second deletion is purged.
    const trash = await call('GET', '/api/v1/bases/{base_id}/trash', { base_id: S.base }, 200, { token: userToken });
    const entry = trash.body.data.find((e: any) => e.type === 'record');
    await call('POST', '/api/v1/trash/{trash_id}/restore', { trash_id: entry.id }, 200, { token: userToken });
    await call('GET', '/api/v1/tables/{table_id}/records/{record_id}/history', { ...t, record_id: empty.body.data.id }, 200, { token: userToken });
    await call('DELETE', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: empty.body.data.id }, 200, { token: userToken });
    const again = (await call('GET', '/api/v1/bases/{base_id}/trash', { base_id: S.base }, 200, { token: userToken })).body.data.find((e: any) => e.type === 'record');
    await call('DELETE', '/api/v1/trash/{trash_id}', { trash_id: again.id }, 200, { token: userToken });
  });

  it('an empty link field reads as null, like every other empty value but checkbox', async () => {
    const t = { table_id: S.table };
    const created = await call('POST', '/api/v1/tables/{table_id}/records', t, 201, { token: userToken, body: { fields: { Name: 'No client' } } });
    expect(created.body.data.fields.Client).toBeNull();
    expect(created.body.data.fields.Tags).toBeNull();
    const cleared = await call('PUT', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: created.body.data.id }, 200, { token: userToken, body: { fields: { Client: null } } });
    expect(cleared.body.data.fields.Client).toBeNull();
  });

  it('bodies: up to 10 MiB is accepted, beyond is 413 PAYLOAD_TOO_LARGE', async () => {
    const t = { table_id: S.table };
    const json = JSON.stringify({ fields: { Name: 'padded' } });
    const exact = await call('POST', '/api/v1/tables/{table_id}/records', t, 201, { token: userToken, raw: json + ' '.repeat(10 * MIB - json.length), headers: { 'content-type': 'application/json' } });
    expect(exact.body.data.fields.Name).toBe('padded');
    const over = await call('POST', '/api/v1/tables/{table_id}/records', t, 413, { token: userToken, raw: json + ' '.repeat(10 * MIB - json.length + 1), headers: { 'content-type': 'application/json' } });
    expectError(over, 413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${10 * MIB} bytes`);
    const bigValue = await call('POST', '/api/v1/tables/{table_id}/records/batch', t, 413, {
      token: userToken, body: { action: 'create', records: [{ fields: { Name: 'x'.repeat(10 * MIB) } }] },
    });
    expectError(bigValue, 413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${10 * MIB} bytes`);
    const declared = await call('PUT', '/api/v1/bases/{base_id}', { base_id: S.base }, 413, {
      token: userToken, raw: ' '.repeat(10 * MIB + 1), headers: { 'content-type': 'application/json', 'content-length': String(10 * MIB + 1) },
    });
    expectError(declared, 413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${10 * MIB} bytes`);
  });

  it('unknown routes give 404 and wrong methods 405 in the v1 envelope', async () => {
    const wrongMethod = await c.request('PATCH', '/api/v1/users');
    expect(wrongMethod.status).toBe(405);
    assertCommon(wrongMethod, 'PATCH /api/v1/users');
    assertErrorSchema(wrongMethod);
    assertConforms('GET', '/api/v1/users', wrongMethod);
    expectError(wrongMethod, 405, 'METHOD_NOT_ALLOWED', 'PATCH is not allowed on /api/v1/users');
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');

    const wrongOnItem = await c.request('POST', `/api/v1/tables/${S.table}`);
    expect(wrongOnItem.status).toBe(405);
    assertCommon(wrongOnItem, 'POST /api/v1/tables/{table_id}');
    assertConforms('GET', '/api/v1/tables/{table_id}', wrongOnItem);
    expectError(wrongOnItem, 405, 'METHOD_NOT_ALLOWED', `POST is not allowed on /api/v1/tables/${S.table}`);
    expect(wrongOnItem.headers.get('allow')).toBe('GET, PUT, DELETE');

    const deleteMe = await c.request('DELETE', '/api/auth/me');
    expect(deleteMe.status).toBe(405);
    assertCommon(deleteMe, 'DELETE /api/auth/me');
    assertConforms('GET', '/api/auth/me', deleteMe);
    expect(deleteMe.headers.get('allow')).toBe('GET');

    for (const path of ['/api/v1/nothing', '/api/auth/nothing', `/api/v1/tables/${S.table}/records/x/y`]) {
      const res = await c.request('GET', path);
      expect(res.status, path).toBe(404);
      assertCommon(res, `GET ${path}`);
      assertErrorSchema(res);
      expectError(res, 404, 'NOT_FOUND', `No route GET ${path}`);
    }
    // Outside the API families, unknown API paths are 404 in the v1 envelope; other paths belong to the web app.
    const outside = await c.request('GET', '/api/nothing/here');
    expect(outside.status).toBe(404);
    assertCommon(outside, 'GET /api/nothing/here');
    assertErrorSchema(outside);
    expect(outside.body).toMatchObject({ code: 404, error: 'NOT_FOUND', data: null });
    const page = await c.request('GET', '/nothing/here', { token: null });
    expect([200, 503]).toContain(page.status);
    expect(page.headers.get('content-type')).toMatch(/^text\/(html|plain)/);
  });

  it('workflows: list, create, read, update, trigger, run log, delete and their errors', async () => {
    const t = { table_id: S.table };
    const rec = await call('POST', '/api/v1/tables/{table_id}/records', t, 201, { token: userToken, body: { fields: { Name: 'Automate me' } } });
    const recordId = rec.body.data.id;
    const definition = {
      name: 'Stamp', table_id: S.table, trigger: { type: 'manual', config: {} },
      nodes: [{ type: 'update_record', config: { fields: { Notes: 'stamped {{record.Name}}' } } }],
    };
    const created = await call('POST', '/api/v1/workflows', {}, 201, { token: userToken, body: definition });
    const workflow = created.body.data;
    expect(workflow).toEqual({
      id: expect.stringMatching(/^wfl/), name: 'Stamp', table_id: S.table, enabled: true, trigger: { type: 'manual', config: {} },
      nodes: [{ id: 'n1', type: 'update_record', config: { fields: { Notes: 'stamped {{record.Name}}' } } }], created_at: TIME, updated_at: workflow.created_at,
    });
    const w = { workflow_id: workflow.id };
    // A second workflow stays until its table is deleted (checked in the last test).
    const kept = await call('POST', '/api/v1/workflows', {}, 201, {
      token: userToken, body: { ...definition, name: 'Kept', trigger: { type: 'record_updated', config: { fields: ['Status'] } }, enabled: false },
    });
    expect(kept.body.data).toMatchObject({ name: 'Kept', enabled: false, trigger: { type: 'record_updated', config: { fields: ['Status'] } } });
    S.keptWorkflow = kept.body.data.id;

    const list = await call('GET', '/api/v1/workflows', {}, 200, { token: viewerToken, query: `table_id=${S.table}` });
    expect(list.body.data).toEqual({ items: [workflow, kept.body.data], total: 2, page: 1, page_size: 20 });
    const paged = await call('GET', '/api/v1/workflows', {}, 200, { token: viewerToken, query: `table_id=${S.table}&page=2&page_size=1` });
    expect(paged.body.data).toEqual({ items: [kept.body.data], total: 2, page: 2, page_size: 1 });
    const everywhere = await call('GET', '/api/v1/workflows', {}, 200, { token: viewerToken });
    expect(everywhere.body.data.items.map((x: any) => x.id)).toEqual([workflow.id, S.keptWorkflow]);
    const one = await call('GET', '/api/v1/workflows/{workflow_id}', w, 200, { token: viewerToken });
    expect(one.body.data).toEqual(workflow);

    const disabled = await call('PUT', '/api/v1/workflows/{workflow_id}', w, 200, { token: userToken, body: { name: 'Stamp it', enabled: false } });
    expect(disabled.body.data).toEqual({ ...workflow, name: 'Stamp it', enabled: false, updated_at: TIME });
    const refused = await call('POST', '/api/v1/workflows/{workflow_id}/trigger', w, 409, { token: userToken, body: { record_id: recordId } });
    expectError(refused, 409, 'CONFLICT', `Workflow ${workflow.id} is disabled`);
    const enabled = await call('PUT', '/api/v1/workflows/{workflow_id}', w, 200, { token: userToken, body: { enabled: true } });
    expect(enabled.body.data).toEqual({ ...disabled.body.data, enabled: true, updated_at: TIME });

    const triggered = await call('POST', '/api/v1/workflows/{workflow_id}/trigger', w, 200, { token: userToken, body: { record_id: recordId } });
    expect(triggered.body.data).toEqual({ run_id: expect.stringMatching(/^run/), status: 'queued' });
    // Runs are executed off the request: wait until the log shows this one finished.
    const deadline = Date.now() + 10_000;
    for (;;) {
      await c.app.runner.idle();
      const status = (await c.request('GET', `/api/v1/workflows/${workflow.id}/logs`, { token: userToken })).body.data.items[0]?.status;
      if (status !== 'queued' && status !== 'running') break;
      if (Date.now() > deadline) throw new Error(`run ${triggered.body.data.run_id} did not finish`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const logs = await call('GET', '/api/v1/workflows/{workflow_id}/logs', w, 200, { token: userToken });
    const after = (await call('GET', '/api/v1/tables/{table_id}/records/{record_id}', { ...t, record_id: recordId }, 200, { token: userToken })).body.data;
    expect(after.fields.Notes).toBe('stamped Automate me');
    expect(logs.body.data).toEqual({
      items: [{
        run_id: triggered.body.data.run_id, workflow_id: workflow.id, status: 'success', trigger: { type: 'manual', record_id: recordId }, depth: 0,
        queued_at: TIME, started_at: TIME, finished_at: TIME, error: null,
        steps: [{ node_id: 'n1', type: 'update_record', status: 'success', started_at: TIME, finished_at: TIME, output: { id: recordId, fields: after.fields }, error: null }],
      }],
      total: 1, page: 1, page_size: 20,
    });
    const run = logs.body.data.items[0];
    expect(run.queued_at <= run.started_at && run.started_at <= run.finished_at).toBe(true);

    const invalid = await call('POST', '/api/v1/workflows', {}, 400, {
      token: userToken, body: { ...definition, nodes: [{ type: 'update_record', config: { fields: { Nope: 1 } } }] },
    });
    expectError(invalid, 400, 'BAD_REQUEST', 'nodes[0].config.fields: unknown field "Nope"', [{ field: 'nodes[0].config.fields', message: 'unknown field "Nope"' }]);
    const noRecord = await call('POST', '/api/v1/workflows/{workflow_id}/trigger', w, 400, { token: userToken, body: {} });
    expectError(noRecord, 400, 'BAD_REQUEST', '"record_id" is required', [{ field: 'record_id', message: '"record_id" is required' }]);
    const foreign = await call('POST', '/api/v1/workflows/{workflow_id}/trigger', w, 404, { token: userToken, body: { record_id: 'recnope' } });
    expectError(foreign, 404, 'NOT_FOUND', `Record recnope not found in table ${S.table}`);
    const viewerCreate = await call('POST', '/api/v1/workflows', {}, 403, { token: viewerToken, body: definition });
    expectError(viewerCreate, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const viewerTrigger = await call('POST', '/api/v1/workflows/{workflow_id}/trigger', w, 403, { token: viewerToken, body: { record_id: recordId } });
    expectError(viewerTrigger, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const viewerLogs = await call('GET', '/api/v1/workflows/{workflow_id}/logs', w, 403, { token: viewerToken });
    expectError(viewerLogs, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const anonymous = await call('GET', '/api/v1/workflows', {}, 401, { token: null });
    expectError(anonymous, 401, 'UNAUTHORIZED', 'Authentication required');

    const deleted = await call('DELETE', '/api/v1/workflows/{workflow_id}', w, 200, { token: userToken });
    expect(deleted.body).toEqual({ code: 0, msg: 'success', data: { id: workflow.id, deleted: true } });
    const gone = await call('GET', '/api/v1/workflows/{workflow_id}', w, 404, { token: userToken });
    expectError(gone, 404, 'NOT_FOUND', `Workflow ${workflow.id} not found`);
    await call('GET', '/api/v1/workflows/{workflow_id}/logs', w, 404, { token: userToken });
    await call('DELETE', '/api/v1/workflows/{workflow_id}', w, 404, { token: userToken });
  });

  it('webhooks: list, create, read, update, test, deliveries, redeliver, delete and their errors', async () => {
    const b = { base_id: S.base };
    const url = `http://127.0.0.1:${upstreamPort}/hook`;
    const created = await call('POST', '/api/v1/bases/{base_id}/webhooks', b, 201, { token: userToken, body: { url, events: ['record.created'], table_id: S.table } });
    const { secret, ...hook } = created.body.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(hook).toEqual({
      id: expect.stringMatching(/^whk/), base_id: S.base, url, events: ['record.created'], table_id: S.table, enabled: true, disabled_reason: null,
      consecutive_failures: 0, created_at: TIME, updated_at: TIME,
    });
    const w = { webhook_id: hook.id };
    expect((await call('GET', '/api/v1/bases/{base_id}/webhooks', b, 200, { token: userToken })).body.data).toEqual([hook]);
    expect((await call('GET', '/api/v1/webhooks/{webhook_id}', w, 200, { token: userToken })).body.data).toEqual(hook);
    const changed = await call('PUT', '/api/v1/webhooks/{webhook_id}', w, 200, { token: userToken, body: { events: ['*'], table_id: null } });
    expect(changed.body.data).toEqual({ ...hook, events: ['*'], table_id: null, updated_at: TIME });

    const ping = (await call('POST', '/api/v1/webhooks/{webhook_id}/test', w, 200, { token: userToken })).body.data;
    expect(ping).toEqual({
      id: expect.stringMatching(/^dlv/), webhook_id: hook.id, event_id: expect.stringMatching(/^evt/), event_type: 'ping', status: 'pending', attempts: 0,
      last_status: null, last_error: null, next_attempt_at: TIME, created_at: TIME, delivered_at: null,
    });
    await c.app.deliveries.idle();
    const log = await call('GET', '/api/v1/webhooks/{webhook_id}/deliveries', w, 200, { token: userToken });
    expect(log.body.data).toEqual([{ ...ping, status: 'delivered', attempts: 1, last_status: 200, next_attempt_at: null, delivered_at: TIME }]);
    const again = await call('POST', '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', { ...w, delivery_id: ping.id }, 200, { token: userToken });
    expect(again.body.data).toMatchObject({ event_id: ping.event_id, event_type: 'ping', status: 'pending', attempts: 0 });
    await c.app.deliveries.idle();

    const bad = await call('POST', '/api/v1/bases/{base_id}/webhooks', b, 400, { token: userToken, body: { url: 'http://169.254.169.254/latest', events: ['*'] } });
    expectError(bad, 400, 'BAD_REQUEST', 'url: 169.254.169.254 is a private address', [{ field: 'url', message: '169.254.169.254 is a private address' }]);
    const badEvent = await call('PUT', '/api/v1/webhooks/{webhook_id}', w, 400, { token: userToken, body: { events: ['record.moved'] } });
    expect(badEvent.body).toMatchObject({ error: 'BAD_REQUEST', details: [{ field: 'events[0]' }] });
    const viewerList = await call('GET', '/api/v1/bases/{base_id}/webhooks', b, 403, { token: viewerToken });
    expectError(viewerList, 403, 'FORBIDDEN', 'You do not have permission to do this');
    await call('GET', '/api/v1/webhooks/{webhook_id}/deliveries', w, 403, { token: viewerToken });
    const anonymous = await call('GET', '/api/v1/webhooks/{webhook_id}', w, 401, { token: null });
    expectError(anonymous, 401, 'UNAUTHORIZED', 'Authentication required');
    const noDelivery = await call('POST', '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', { ...w, delivery_id: 'dlvnope' }, 404, { token: userToken });
    expectError(noDelivery, 404, 'NOT_FOUND', `Delivery dlvnope of webhook ${hook.id} not found`);
    await call('PUT', '/api/v1/webhooks/{webhook_id}', w, 200, { token: userToken, body: { enabled: false } });
    const refused = await call('POST', '/api/v1/webhooks/{webhook_id}/test', w, 409, { token: userToken });
    expectError(refused, 409, 'CONFLICT', 'The webhook is disabled: enable it to send a test');

    const deleted = await call('DELETE', '/api/v1/webhooks/{webhook_id}', w, 200, { token: userToken });
    expect(deleted.body.data).toEqual({ id: hook.id, deleted: true });
    const gone = await call('GET', '/api/v1/webhooks/{webhook_id}', w, 404, { token: userToken });
    expectError(gone, 404, 'NOT_FOUND', `Webhook ${hook.id} not found`);
    await call('DELETE', '/api/v1/webhooks/{webhook_id}', w, 404, { token: userToken });
  });

  it('plugins: upload, list, read, status, installations, config, rpc, proxy, sandbox URL, script runs, endpoint calls, run logs, rollback, uninstall and their errors', async () => {
    const manifest = exampleManifest('record-tagger');
    const id = manifest.id as string;
    const p = { plugin_id: id };
    // The example plus the network permission for the local upstream (an IP literal of the allow-list).
    const permissions = { ...manifest.permissions, network: ['127.0.0.1'] };

    // Upload: multipart, then a higher version as a raw application/zip body.
    const uploaded = await call('POST', '/api/plugins/upload', {}, 201, { upload: await pack('record-tagger', { permissions }) });
    const plugin = uploaded.body.data;
    expect(plugin).toEqual({
      id, name: manifest.name, description: manifest.description, author: manifest.author, type: 'ui', version: '1.0.0',
      versions: [{ version: '1.0.0', uploaded_at: TIME }], status: 'disabled', consecutive_failures: 0, permissions,
      extension_points: manifest.extensionPoints, endpoints: [], config_schema: manifest.configSchema, created_at: TIME, updated_at: TIME,
    });
    const upgraded = await call('POST', '/api/plugins/upload', {}, 201, { upload: await pack('record-tagger', { permissions, version: '1.1.0' }), zip: true });
    expect(upgraded.body.data).toEqual({
      ...plugin, version: '1.1.0', versions: [{ version: '1.1.0', uploaded_at: TIME }, plugin.versions[0]], updated_at: TIME,
    });
    const script = await call('POST', '/api/plugins/upload', {}, 201, { upload: await pack('row-stats') });
    expect(script.body.data).toMatchObject({ id: 'com.example.row-stats', type: 'script', status: 'disabled', endpoints: [{ name: 'summary' }] });

    const same = await call('POST', '/api/plugins/upload', {}, 409, { upload: await pack('record-tagger', { permissions, version: '1.1.0' }) });
    expectError(same, 409, 'VERSION_NOT_HIGHER', `Version 1.1.0 is not higher than 1.1.0, the highest version of ${id}`);
    const invalid = await call('POST', '/api/plugins/upload', {}, 400, { upload: await pack('record-tagger', { id: 'com.example.broken', apiVersion: '2', entry: 'missing.js' }) });
    expect(invalid.body).toMatchObject({ code: 400, error: 'INVALID_PACKAGE', data: null });
    expect(invalid.body.details.length).toBeGreaterThanOrEqual(2);
    // Every problem names where it is in the package (contract section 7: path + message).
    for (const d of invalid.body.details) {
      expect(d.message, JSON.stringify(d)).toEqual(expect.any(String));
      expect(d.path ?? d.field, JSON.stringify(d)).toEqual(expect.any(String));
    }
    await call('GET', '/api/plugins/{plugin_id}', { plugin_id: 'com.example.broken' }, 404);
    const noFile = new FormData();
    noFile.append('package', new Blob([new Uint8Array(await pack('record-tagger'))]), 'plugin.zip');
    const noPart = await call('POST', '/api/plugins/upload', {}, 400, { upload: noFile });
    expectError(noPart, 400, 'BAD_REQUEST', 'The multipart body needs a "file" part holding the package', [{ field: 'file', message: 'required' }]);
    const empty = await call('POST', '/api/plugins/upload', {}, 400, { upload: Buffer.alloc(0), zip: true });
    expect(empty.body).toMatchObject({ code: 400, error: 'BAD_REQUEST' });
    const notAZip = await call('POST', '/api/plugins/upload', {}, 400, { upload: Buffer.from('not a zip at all'), zip: true });
    expect(notAZip.body).toMatchObject({ error: 'INVALID_PACKAGE' });
    const tooBig = await call('POST', '/api/plugins/upload', {}, 413, { upload: Buffer.from('PK'), zip: true, headers: { 'content-length': String(50 * MIB + 1) } });
    expectError(tooBig, 413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${50 * MIB} bytes`);
    const notAdmin = await call('POST', '/api/plugins/upload', {}, 403, { token: userToken, upload: await pack('record-tagger', { permissions, version: '2.0.0' }) });
    expectError(notAdmin, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const anonymous = await call('POST', '/api/plugins/upload', {}, 401, { token: null, upload: await pack('record-tagger', { permissions, version: '2.0.0' }) });
    expectError(anonymous, 401, 'UNAUTHORIZED', 'Authentication required');

    // List and detail: any signed-in user; with base_id, a viewer of that base sees the installation of ui plugins.
    const list = await call('GET', '/api/plugins', {}, 200, { token: viewerToken });
    expect(list.body.data).toEqual([upgraded.body.data, script.body.data]);
    const inBase = await call('GET', '/api/plugins', {}, 200, { token: viewerToken, query: `base_id=${S.base}` });
    expect(inBase.body.data).toEqual([{ ...upgraded.body.data, installation: { installed: false, enabled: false } }, script.body.data]);
    const one = await call('GET', '/api/plugins/{plugin_id}', p, 200, { token: viewerToken });
    expect(one.body.data).toEqual(upgraded.body.data);
    const oneInBase = await call('GET', '/api/plugins/{plugin_id}', p, 200, { token: viewerToken, query: `base_id=${S.base}` });
    expect(oneInBase.body.data.installation).toEqual({ installed: false, enabled: false });
    const outsider = await call('GET', '/api/plugins', {}, 403, { token: viewerToken, query: `base_id=${S.userBase}` });
    expectError(outsider, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const missing = await call('GET', '/api/plugins/{plugin_id}', { plugin_id: 'com.example.nope' }, 404, { token: viewerToken });
    expectError(missing, 404, 'NOT_FOUND', 'Plugin com.example.nope not found');
    await call('GET', '/api/plugins', {}, 401, { token: null });

    // Installations: base administrators, ui plugins only.
    const viewerInstall = await call('POST', '/api/plugins/{plugin_id}/installations', p, 403, { token: viewerToken, body: { base_id: S.base } });
    expectError(viewerInstall, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const installed = await call('POST', '/api/plugins/{plugin_id}/installations', p, 201, { token: userToken, body: { base_id: S.base } });
    expect(installed.body.data).toEqual({ ...upgraded.body.data, installation: { installed: true, enabled: true } });
    const scriptInstall = await call('POST', '/api/plugins/{plugin_id}/installations', { plugin_id: 'com.example.row-stats' }, 400, { token: userToken, body: { base_id: S.base } });
    expectError(scriptInstall, 400, 'BAD_REQUEST', 'Plugin com.example.row-stats is a script plugin: only ui plugins are installed in bases');
    const noBase = await call('POST', '/api/plugins/{plugin_id}/installations', p, 400, { token: userToken, body: {} });
    expectError(noBase, 400, 'BAD_REQUEST', '"base_id" is required', [{ field: 'base_id', message: '"base_id" is required' }]);

    // A first upload stays disabled until enabled: RPC, proxy and sandbox URLs answer PLUGIN_DISABLED.
    const rpcBody = (method: string, params: unknown = {}) => ({ base_id: S.base, method, params });
    const disabledRpc = await call('POST', '/api/plugins/{plugin_id}/rpc', p, 403, { token: userToken, body: rpcBody('table.listTables') });
    expectError(disabledRpc, 403, 'PLUGIN_DISABLED', `Plugin ${id} is disabled`);
    const disabledSandbox = await call('POST', '/api/plugins/{plugin_id}/sandbox-url', p, 403, { token: userToken, body: { base_id: S.base, extension_point: 'toolbar-button' } });
    expectError(disabledSandbox, 403, 'PLUGIN_DISABLED', `Plugin ${id} is disabled`);

    // Status: system administrators; restore only from error.
    const viewerStatus = await call('PUT', '/api/plugins/{plugin_id}/status', p, 403, { token: userToken, body: { action: 'enable' } });
    expectError(viewerStatus, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const enabled = await call('PUT', '/api/plugins/{plugin_id}/status', p, 200, { body: { action: 'enable' } });
    expect(enabled.body.data).toEqual({ ...upgraded.body.data, status: 'enabled', updated_at: TIME });
    const restore = await call('PUT', '/api/plugins/{plugin_id}/status', p, 409, { body: { action: 'restore' } });
    expectError(restore, 409, 'CONFLICT', `Plugin ${id} is enabled; only a plugin in error can be restored`);
    const badAction = await call('PUT', '/api/plugins/{plugin_id}/status', p, 400, { body: { action: 'pause' } });
    expectError(badAction, 400, 'BAD_REQUEST', '"action" must be equal to one of the allowed values', [{ field: 'action', message: '"action" must be equal to one of the allowed values' }]);

    // Enable or disable in the base; a plugin disabled there refuses RPC with PERMISSION_DENIED.
    const off = await call('PUT', '/api/plugins/{plugin_id}/installations', p, 200, { token: userToken, body: { base_id: S.base, enabled: false } });
    expect(off.body.data.installation).toEqual({ installed: true, enabled: false });
    const notEnabledHere = await call('POST', '/api/plugins/{plugin_id}/rpc', p, 403, { token: userToken, body: rpcBody('table.listTables') });
    expectError(notEnabledHere, 403, 'PERMISSION_DENIED', `Plugin ${id} is not installed and enabled in base ${S.base}`);
    const on = await call('PUT', '/api/plugins/{plugin_id}/installations', p, 200, { token: userToken, body: { base_id: S.base, enabled: true } });
    expect(on.body.data.installation).toEqual({ installed: true, enabled: true });
    const viewerToggle = await call('PUT', '/api/plugins/{plugin_id}/installations', p, 403, { token: viewerToken, body: { base_id: S.base, enabled: false } });
    expectError(viewerToggle, 403, 'FORBIDDEN', 'You do not have permission to do this');

    // Configuration: global by system administrators, base by base administrators; validated against configSchema.
    const global = await call('PUT', '/api/plugins/{plugin_id}/config', p, 200, { query: 'scope=global', body: { config: { field: 'Notes', note: 'global' } } });
    expect(global.body.data).toEqual({ scope: 'global', base_id: null, config: { field: 'Notes', note: 'global' }, effective: { field: 'Notes', note: 'global' } });
    const base = await call('PUT', '/api/plugins/{plugin_id}/config', p, 200, { token: userToken, query: `scope=base&base_id=${S.base}`, body: { config: { note: 'base' } } });
    expect(base.body.data).toEqual({ scope: 'base', base_id: S.base, config: { note: 'base' }, effective: { field: 'Notes', note: 'base' } });
    expect((await call('GET', '/api/plugins/{plugin_id}/config', p, 200, { query: 'scope=global' })).body.data).toEqual(global.body.data);
    expect((await call('GET', '/api/plugins/{plugin_id}/config', p, 200, { token: userToken, query: `scope=base&base_id=${S.base}` })).body.data).toEqual(base.body.data);
    const invalidConfig = await call('PUT', '/api/plugins/{plugin_id}/config', p, 400, { query: 'scope=global', body: { config: { field: 5 } } });
    expect(invalidConfig.body).toMatchObject({ code: 400, error: 'INVALID_CONFIG', details: [expect.objectContaining({ field: 'field' })] });
    const userGlobal = await call('PUT', '/api/plugins/{plugin_id}/config', p, 403, { token: userToken, query: 'scope=global', body: { config: {} } });
    expectError(userGlobal, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const viewerBase = await call('GET', '/api/plugins/{plugin_id}/config', p, 403, { token: viewerToken, query: `scope=base&base_id=${S.base}` });
    expectError(viewerBase, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const noBaseId = await call('GET', '/api/plugins/{plugin_id}/config', p, 400, { query: 'scope=base' });
    expectError(noBaseId, 400, 'BAD_REQUEST', 'base_id is required for scope=base', [{ field: 'base_id', message: 'required' }]);

    // RPC as the calling user: a viewer reads, the permission and the role are checked.
    const tables = await call('POST', '/api/plugins/{plugin_id}/rpc', p, 200, { token: viewerToken, body: rpcBody('table.listTables') });
    expect(tables.body.data).toEqual({
      result: [{ id: S.clients, name: 'Clients', description: '' }, { id: S.table, name: 'Task list', description: 'Every task' }],
    });
    const config = await call('POST', '/api/plugins/{plugin_id}/rpc', p, 200, { token: viewerToken, body: rpcBody('config.get', null) });
    expect(config.body.data).toEqual({ result: { field: 'Notes', note: 'base' } });
    const viewerWrite = await call('POST', '/api/plugins/{plugin_id}/rpc', p, 403, { token: viewerToken, body: rpcBody('record.create', { tableId: S.table, values: { Name: 'x' } }) });
    expectError(viewerWrite, 403, 'PERMISSION_DENIED', `record.create needs the editor role in base ${S.base}`);
    const unknownMethod = await call('POST', '/api/plugins/{plugin_id}/rpc', p, 404, { token: viewerToken, body: rpcBody('nope.method') });
    expectError(unknownMethod, 404, 'METHOD_NOT_FOUND', 'Unknown method "nope.method"');
    const noMethod = await call('POST', '/api/plugins/{plugin_id}/rpc', p, 400, { token: viewerToken, body: { base_id: S.base } });
    expectError(noMethod, 400, 'BAD_REQUEST', '"method" is required', [{ field: 'method', message: '"method" is required' }]);

    // Proxy: to a host of permissions.network; Set-Cookie never comes back.
    const proxied = await call('POST', '/api/plugins/{plugin_id}/proxy', p, 200, {
      token: userToken, body: { base_id: S.base, url: `http://127.0.0.1:${upstreamPort}/hello?x=1`, method: 'POST', headers: { Cookie: 'secret', 'X-Custom': 'kept' }, body: 'hi' },
    });
    expect(proxied.body.data).toEqual({ status: 200, headers: expect.objectContaining({ 'x-upstream': 'yes', 'content-type': 'application/json' }), body: expect.any(String), body_encoding: 'text' });
    expect(JSON.parse(proxied.body.data.body)).toEqual({ method: 'POST', url: '/hello?x=1' });
    expect(proxied.body.data.headers['set-cookie']).toBeUndefined();
    const foreign = await call('POST', '/api/plugins/{plugin_id}/proxy', p, 403, { token: userToken, body: { base_id: S.base, url: 'http://example.org/' } });
    expectError(foreign, 403, 'PERMISSION_DENIED', "example.org is not in the plugin's network allow-list");
    const ssrf = await call('POST', '/api/plugins/{plugin_id}/proxy', p, 403, { token: userToken, body: { base_id: S.base, url: 'http://127.0.0.1:9/' } });
    expect(ssrf.body).toMatchObject({ error: 'SSRF_BLOCKED' });

    // Sandbox URL: a signed loader URL of the current version, valid 10 minutes.
    const sandbox = await call('POST', '/api/plugins/{plugin_id}/sandbox-url', p, 200, {
      token: viewerToken, body: { base_id: S.base, table_id: S.table, extension_point: 'toolbar-button', selection: { recordIds: ['rec1'], total: 1 } },
    });
    expect(sandbox.body.data).toMatchObject({
      url: expect.stringMatching(new RegExp(`^http://test\\.local/api/plugins/${id.replace(/\./g, '\\.')}/versions/1\\.1\\.0/loader\\.html\\?`)),
      expires_at: TIME, handshake_token: expect.any(String), permissions,
      context: { pluginId: id, baseId: S.base, tableId: S.table, extensionPoint: 'toolbar-button', selection: expect.objectContaining({ recordIds: ['rec1'], total: 1, truncated: false }) },
    });
    const ttl = new Date(sandbox.body.data.expires_at).getTime() - Date.now();
    expect(ttl > 590_000 && ttl <= 600_000).toBe(true);
    expect((await c.app.fetch(new Request(sandbox.body.data.url))).status).toBe(200);
    const badPoint = await call('POST', '/api/plugins/{plugin_id}/sandbox-url', p, 400, { token: viewerToken, body: { base_id: S.base, extension_point: 'home-menu' } });
    expectError(badPoint, 400, 'INVALID_PARAMS', 'extension_point must be one the plugin declares: toolbar-button, side-panel');

    // Rollback: system administrators, to a retained version; status, configuration and installations stay.
    const userRollback = await call('POST', '/api/plugins/{plugin_id}/rollback', p, 403, { token: userToken, body: { version: '1.0.0' } });
    expectError(userRollback, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const rolledBack = await call('POST', '/api/plugins/{plugin_id}/rollback', p, 200, { body: { version: '1.0.0' } });
    expect(rolledBack.body.data).toEqual({ ...enabled.body.data, version: '1.0.0', updated_at: TIME });
    const current = await call('POST', '/api/plugins/{plugin_id}/rollback', p, 409, { body: { version: '1.0.0' } });
    expectError(current, 409, 'CONFLICT', 'Version 1.0.0 is already current');
    const notRetained = await call('POST', '/api/plugins/{plugin_id}/rollback', p, 404, { body: { version: '9.9.9' } });
    expectError(notRetained, 404, 'NOT_FOUND', `Version 9.9.9 of plugin ${id} is not retained`);
    expect((await call('GET', '/api/plugins/{plugin_id}/config', p, 200, { token: userToken, query: `scope=base&base_id=${S.base}` })).body.data).toEqual(base.body.data);
    expect((await call('GET', '/api/plugins/{plugin_id}', p, 200, { token: viewerToken, query: `base_id=${S.base}` })).body.data).toMatchObject({
      version: '1.0.0', status: 'enabled', installation: { installed: true, enabled: true },
    });

    // Script plugins (examples/row-stats, uploaded above): runs for editors and above, a declared endpoint for any member,
    // the run log for base administrators (every base for system administrators). Three real sandboxed runs.
    const sp = { plugin_id: 'com.example.row-stats' };
    const summary = { ...sp, endpoint: 'summary' };
    const disabledRun = await call('POST', '/api/plugins/{plugin_id}/run', sp, 403, { token: userToken, body: { base_id: S.base, table_id: S.table } });
    expectError(disabledRun, 403, 'PLUGIN_DISABLED', 'Plugin com.example.row-stats is disabled');
    await call('PUT', '/api/plugins/{plugin_id}/status', sp, 200, { body: { action: 'enable' } });
    const count = (await c.request('GET', `/api/v1/tables/${S.table}/records?page_size=1`, { token: userToken })).body.data.total;
    const ran = await call('POST', '/api/plugins/{plugin_id}/run', sp, 200, { token: userToken, body: { base_id: S.base, table_id: S.table, params: { note: 'x' } } });
    expect(ran.body.data).toEqual({
      run_id: expect.stringMatching(/^run/), status: 'completed', result: { table_id: S.table, count, sum: 0 }, error: null, logs: [`counted ${count} records`],
    });
    const viewerRun = await call('POST', '/api/plugins/{plugin_id}/run', sp, 403, { token: viewerToken, body: { base_id: S.base, table_id: S.table } });
    expectError(viewerRun, 403, 'PERMISSION_DENIED', `Running a script plugin needs the editor role in base ${S.base}`);
    const uiRun = await call('POST', '/api/plugins/{plugin_id}/run', p, 400, { token: userToken, body: { base_id: S.base } });
    expectError(uiRun, 400, 'BAD_REQUEST', `Plugin ${id} is a ui plugin; only script plugins run`);
    const noBaseRun = await call('POST', '/api/plugins/{plugin_id}/run', sp, 400, { token: userToken, body: { table_id: S.table } });
    expectError(noBaseRun, 400, 'BAD_REQUEST', '"base_id" is required', [{ field: 'base_id', message: '"base_id" is required' }]);
    const missingRun = await call('POST', '/api/plugins/{plugin_id}/run', { plugin_id: 'com.example.nope' }, 404, { token: userToken, body: { base_id: S.base } });
    expectError(missingRun, 404, 'NOT_FOUND', 'Plugin com.example.nope not found');

    const called = await call('POST', '/api/plugins/{plugin_id}/call/{endpoint}', summary, 200, { token: viewerToken, body: { base_id: S.base, payload: { table_id: S.table } } });
    expect(called.body.data).toEqual({ result: { table_id: S.table, count } });
    const undeclared = await call('POST', '/api/plugins/{plugin_id}/call/{endpoint}', { ...sp, endpoint: 'nope' }, 404, { token: viewerToken, body: { base_id: S.base } });
    expectError(undeclared, 404, 'ENDPOINT_NOT_DECLARED', 'Plugin com.example.row-stats declares no endpoint "nope"');
    const outsiderCall = await call('POST', '/api/plugins/{plugin_id}/call/{endpoint}', summary, 403, { token: viewerToken, body: { base_id: S.userBase, payload: { table_id: S.table } } });
    expectError(outsiderCall, 403, 'PERMISSION_DENIED', `You are not a member of base ${S.userBase}`);
    // The endpoint's script fails (no table_id in the payload): 502 ENDPOINT_FAILED. The document lists no 502 (nor 504) for
    // any operation, so the answer is checked against the document's Error schema rather than through call().
    const failedCall = await c.request('POST', '/api/plugins/com.example.row-stats/call/summary', { token: viewerToken, body: { base_id: S.base, payload: {} } });
    expect(failedCall.status, JSON.stringify(failedCall.body)).toBe(502);
    assertCommon(failedCall, 'POST /api/plugins/com.example.row-stats/call/summary');
    assertErrorSchema(failedCall);
    expectError(failedCall, 502, 'ENDPOINT_FAILED', /^KeyError: 'table_id'/);

    const logs = await call('GET', '/api/plugins/{plugin_id}/run-logs', sp, 200, { token: userToken, query: `base_id=${S.base}` });
    const entry = { plugin_id: 'com.example.row-stats', version: '1.0.0', base_id: S.base, started_at: TIME, finished_at: TIME, duration_ms: expect.any(Number) };
    expect(logs.body.data).toEqual({
      items: [
        {
          ...entry, run_id: expect.stringMatching(/^run/), kind: 'call', endpoint: 'summary', user_id: S.viewer, status: 'failed', result: null,
          error: failedCall.body.msg, traceback: expect.stringContaining('summary.py'), logs: [],
        },
        { ...entry, run_id: expect.stringMatching(/^run/), kind: 'call', endpoint: 'summary', user_id: S.viewer, status: 'completed', result: called.body.data.result, error: null, traceback: null, logs: [] },
        { ...entry, run_id: ran.body.data.run_id, kind: 'run', endpoint: null, user_id: S.user, status: 'completed', result: ran.body.data.result, error: null, traceback: null, logs: ran.body.data.logs },
      ],
      total: 3, page: 1, page_size: 20,
    });
    const everyBase = await call('GET', '/api/plugins/{plugin_id}/run-logs', sp, 200, { query: 'page=2&page_size=2' });
    expect(everyBase.body.data).toEqual({ items: [logs.body.data.items[2]], total: 3, page: 2, page_size: 2 });
    const viewerLogs = await call('GET', '/api/plugins/{plugin_id}/run-logs', sp, 403, { token: viewerToken, query: `base_id=${S.base}` });
    expectError(viewerLogs, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const userEveryBase = await call('GET', '/api/plugins/{plugin_id}/run-logs', sp, 403, { token: userToken });
    expectError(userEveryBase, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const missingLogs = await call('GET', '/api/plugins/{plugin_id}/run-logs', { plugin_id: 'com.example.nope' }, 404);
    expectError(missingLogs, 404, 'NOT_FOUND', 'Plugin com.example.nope not found');

    // Remove from the base, then uninstall.
    const removed = await call('DELETE', '/api/plugins/{plugin_id}/installations', p, 200, { token: userToken, query: `base_id=${S.base}` });
    expect(removed.body.data).toEqual({ ...rolledBack.body.data, installation: { installed: false, enabled: false } });
    const removedAgain = await call('DELETE', '/api/plugins/{plugin_id}/installations', p, 404, { token: userToken, query: `base_id=${S.base}` });
    expectError(removedAgain, 404, 'NOT_FOUND', `Plugin ${id} is not installed in base ${S.base}`);
    const noQuery = await call('DELETE', '/api/plugins/{plugin_id}/installations', p, 400, { token: userToken });
    expectError(noQuery, 400, 'BAD_REQUEST', 'base_id is required', [{ field: 'base_id', message: 'required' }]);
    const userUninstall = await call('DELETE', '/api/plugins/{plugin_id}', p, 403, { token: userToken });
    expectError(userUninstall, 403, 'FORBIDDEN', 'You do not have permission to do this');
    const uninstalled = await call('DELETE', '/api/plugins/{plugin_id}', p, 200);
    expect(uninstalled.body).toEqual({ code: 0, msg: 'success', data: { id, deleted: true } });
    await call('GET', '/api/plugins/{plugin_id}', p, 404);
    await call('DELETE', '/api/plugins/{plugin_id}', p, 404);
    // Uninstalling took every version, the configuration and the installations: the same id uploads again as a first upload.
    const again = await call('POST', '/api/plugins/upload', {}, 201, { upload: await pack('record-tagger', { permissions }) });
    expect(again.body.data).toMatchObject({ id, version: '1.0.0', versions: [{ version: '1.0.0' }], status: 'disabled' });
    expect((await call('GET', '/api/plugins/{plugin_id}/config', p, 200, { query: `scope=base&base_id=${S.base}` })).body.data).toEqual({ scope: 'base', base_id: S.base, config: {}, effective: {} });
    expect((await call('GET', '/api/plugins/{plugin_id}', p, 200, { query: `base_id=${S.base}` })).body.data.installation).toEqual({ installed: false, enabled: false });
    await call('DELETE', '/api/plugins/{plugin_id}', p, 200);
    await call('DELETE', '/api/plugins/{plugin_id}', { plugin_id: 'com.example.row-stats' }, 200);
    expect((await call('GET', '/api/plugins', {}, 200)).body.data).toEqual([]);
  });

  it('imports, jobs and exports (contract section 15)', async () => {
    const table = (await call('POST', '/api/v1/tables', {}, 201, { body: { name: 'Imported into', fields: [{ name: 'A', type: 'text' }] } })).body.data;
    const form = (csv: string) => {
      const f = new FormData();
      f.set('file', new Blob([csv]), 'a.csv');
      return f;
    };
    const started = await call('POST', '/api/v1/tables/{table_id}/import', { table_id: table.id }, 202, { upload: form('A\nx\ny\n') });
    const job = { job_id: started.body.data.job_id };
    let answer = await call('GET', '/api/v1/jobs/{job_id}', job, 200);
    for (let i = 0; i < 500 && ['queued', 'running'].includes(answer.body.data.status); i++) {
      await new Promise((r) => setTimeout(r, 20));
      answer = await call('GET', '/api/v1/jobs/{job_id}', job, 200);
    }
    expect(answer.body.data).toMatchObject({ status: 'succeeded', imported: 2, errors: [] });
    expect((await call('POST', '/api/v1/jobs/{job_id}/cancel', job, 200)).body.data.status).toBe('succeeded');
    await call('GET', '/api/v1/jobs/{job_id}', { job_id: 'jobNOPE' }, 404);
    const badMapping = form('A\nx\n');
    badMapping.set('options', JSON.stringify({ mapping: { Nope: 'A' } }));
    await call('POST', '/api/v1/tables/{table_id}/import', { table_id: table.id }, 400, { upload: badMapping });
    await call('POST', '/api/v1/bases/{base_id}/import', { base_id: table.base_id }, 202, { upload: form('Name,N\na,1\n') });
    const exported = await call('GET', '/api/v1/tables/{table_id}/export', { table_id: table.id }, 200);
    expect(exported.text).toBe('A\r\nx\r\ny\r\n');
    await call('GET', '/api/v1/tables/{table_id}/export', { table_id: table.id }, 400, { query: 'format=pdf' });
  });

  it('attachment uploads (contract section 16): stored, a body without a file part refused', async () => {
    const file = new FormData();
    file.set('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
    const stored = await call('POST', '/api/v1/attachments', {}, 201, { upload: file });
    expect(stored.body.data).toEqual({ id: expect.stringMatching(/^att/), name: 'hello.txt', size: 5, mime_type: 'text/plain' });
    const empty = new FormData();
    empty.set('other', 'x');
    await call('POST', '/api/v1/attachments', {}, 400, { upload: empty });
  });

  it('views and sharing (contract section 13): list, create, read, update, share, shared pages, form submit, delete and their errors', async () => {
    const table = (await call('POST', '/api/v1/tables', {}, 201, { body: { name: 'With views', fields: [{ name: 'A', type: 'text' }] } })).body.data;
    const t = { table_id: table.id };
    const [grid] = (await call('GET', '/api/v1/tables/{table_id}/views', t, 200)).body.data;
    await call('DELETE', '/api/v1/views/{view_id}', { view_id: grid.id }, 409);
    const v = (await call('POST', '/api/v1/tables/{table_id}/views', t, 201, { body: { name: 'Form', type: 'form', config: { fields: [{ field: 'A' }] } } })).body.data;
    await call('POST', '/api/v1/tables/{table_id}/views', t, 400, { body: { name: 'Bad', type: 'kanban' } });
    await call('GET', '/api/v1/views/{view_id}', { view_id: v.id }, 200);
    await call('PUT', '/api/v1/views/{view_id}', { view_id: v.id }, 200, { body: { name: 'The form' } });
    const share = (await call('POST', '/api/v1/views/{view_id}/share', { view_id: v.id }, 200)).body.data;
    const gridShare = (await call('POST', '/api/v1/views/{view_id}/share', { view_id: grid.id }, 200)).body.data;
    await call('GET', '/api/share/{share_id}', { share_id: share.share_id }, 200, { token: null });
    await call('GET', '/api/share/{share_id}/records', { share_id: gridShare.share_id }, 200, { token: null });
    await call('POST', '/api/share/{share_id}/submit', { share_id: share.share_id }, 201, { token: null, body: { fields: { A: 'x' } } });
    await call('POST', '/api/share/{share_id}/submit', { share_id: share.share_id }, 400, { token: null, body: { fields: { B: 'x' } } });
    await call('DELETE', '/api/v1/views/{view_id}/share', { view_id: v.id }, 200);
    await call('GET', '/api/share/{share_id}', { share_id: share.share_id }, 404, { token: null });
    await call('DELETE', '/api/v1/views/{view_id}', { view_id: v.id }, 200);
  });

  it('deleting what was built: tables, bases and users', async () => {
    await call('DELETE', '/api/v1/tables/{table_id}', { table_id: S.table }, 200, { token: userToken });
    // Deleting a table deletes its workflows (contract section 4).
    const keptGone = await call('GET', '/api/v1/workflows/{workflow_id}', { workflow_id: S.keptWorkflow }, 404, { token: userToken });
    expectError(keptGone, 404, 'NOT_FOUND', `Workflow ${S.keptWorkflow} not found`);
    await call('DELETE', '/api/v1/bases/{base_id}', { base_id: S.base }, 200, { token: userToken });
    const gone = await call('GET', '/api/v1/tables/{table_id}', { table_id: S.clients }, 404, { token: userToken });
    expectError(gone, 404, 'NOT_FOUND', `Table ${S.clients} not found`);
    await call('DELETE', '/api/v1/users/{user_id}', { user_id: S.viewer }, 200);
    const stale = await call('GET', '/api/auth/me', {}, 401, { token: viewerToken });
    expectError(stale, 401, 'UNAUTHORIZED', 'The token belongs to a user that no longer exists');
  });

  it('exercised a success answer of every route and the error statuses 400, 401, 403, 404, 409 and 413', () => {
    const missing = routes.map((r) => `${r.method} ${r.path}`).filter((k) => !succeeded.has(k));
    expect(missing, 'routes without a conforming success answer').toEqual([]);
    const statuses = new Set([...failed].map((k) => k.split(' ')[2]));
    expect([...statuses].sort()).toEqual(['400', '401', '403', '404', '409', '413']);
  });
});

describe('X-Request-Id', () => {
  it('is on every answer and differs between requests', async () => {
    const answers = await Promise.all([
      c.request('GET', '/healthz', { token: null }),
      c.request('GET', '/api/v1/openapi.json', { token: null }),
      c.request('GET', '/api/auth/me'),
      c.request('GET', '/api/auth/me', { token: null }),
      c.request('GET', '/api/v1/nothing'),
      c.graphql('{ me { id } }'),
      c.graphql('{ me { id } }', undefined, null),
    ]);
    const ids = answers.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    expect(answers[3].body.request_id).toBe(ids[3]);
    expect(answers[4].body.request_id).toBe(ids[4]);
  });

  it('reuses a well-formed incoming id on successes, errors, GraphQL and documents', async () => {
    const id = 'client-Req_42.a';
    for (const [method, path, token] of [
      ['GET', '/api/auth/me', undefined], ['GET', '/api/auth/me', null], ['GET', '/api/v1/nothing', undefined], ['PATCH', '/api/v1/users', undefined],
      ['GET', '/api/v1/openapi.json', null], ['GET', '/healthz', null], ['GET', '/api/v1/tables/tblnope', undefined],
    ] as const) {
      const res = await c.request(method, path, { token, headers: { 'x-request-id': id } });
      expect(res.headers.get('x-request-id'), `${method} ${path}`).toBe(id);
      if (res.status >= 400) expect(res.body.request_id, `${method} ${path}`).toBe(id);
    }
    const gql = await c.request('POST', '/graphql', { body: { query: '{ me { id } }' }, headers: { 'x-request-id': id } });
    expect(gql.headers.get('x-request-id')).toBe(id);
    const max = 'a'.repeat(128);
    expect((await c.request('GET', '/api/auth/me', { headers: { 'x-request-id': max } })).headers.get('x-request-id')).toBe(max);
  });

  it('replaces a malformed incoming id', async () => {
    for (const bad of ['has space', 'a'.repeat(129), 'semi;colon', 'slash/id', 'ünïcode', '"quoted"']) {
      const res = await c.request('GET', '/api/v1/tables/tblnope', { headers: { 'x-request-id': bad } });
      expect(res.status).toBe(404);
      const id = res.headers.get('x-request-id');
      expect(id, bad).not.toBe(bad);
      expect(id, bad).toMatch(UUID);
      expect(res.body.request_id, bad).toBe(id);
    }
  });
});
