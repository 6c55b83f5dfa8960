// Two standard OAuth 2.0 client libraries against the real server over HTTP (contract section 6): they discover
// the token endpoint from RFC 8414 metadata, get a token with client_secret_basic and client_secret_post, and call
// the Open API with it. The token verifies against the published JWKS fetched over HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient } from './helpers.js';

let server: http.Server;
let publicUrl: string;
let c: TestClient;
let baseId: string;
let tableId: string;
let app: { id: string; client_id: string; client_secret: string };
let handler: (request: Request) => Promise<Response> = async () => new Response('starting', { status: 503 });

beforeAll(async () => {
  // Listen first to learn the port, then build the app with PUBLIC_URL set to the real address.
  server = http.createServer(createServerAdapter((request: Request) => handler(request)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  c = await makeApp({ PUBLIC_URL: publicUrl });
  handler = (request) => c.app.fetch(request);

  const base = await c.request('POST', '/api/v1/bases', { body: { name: 'Client base' } });
  baseId = base.body.data.id;
  tableId = await makeTable(c, [{ name: 'Name', type: 'text' }], { baseId });
  const res = await c.request('POST', '/api/v1/tables/' + tableId + '/records', { body: { fields: { Name: 'seen by clients' } } });
  expect(res.status).toBe(201);
  const created = await c.request('POST', '/api/oauth/apps', {
    body: { app_name: 'Library client', callback_url: 'https://client.example/cb', scopes: ['base:read', 'record:read', 'record:write'], allowed_bases: [baseId] },
  });
  expect(created.status).toBe(201);
  app = created.body.data;
});
afterAll(async () => {
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  c?.close();
});

/** Calls the Open API over HTTP with a bearer token. */
async function openApi(token: string, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${publicUrl}/api/open/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/**
 * A refused client authentication as the libraries report it: the RFC 6749 body error `invalid_client` with 401;
 * with HTTP Basic the answer also carries a `WWW-Authenticate: Basic` challenge, which both libraries raise as
 * a WWWAuthenticateChallengeError (the body is then read from its response).
 */
async function expectInvalidClient(error: unknown, basic: boolean) {
  if (basic) {
    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const e = error as oauth.WWWAuthenticateChallengeError;
    expect(e.status).toBe(401);
    expect(e.cause.map((ch) => ch.scheme)).toContain('basic');
    expect(((await e.response.json()) as any).error).toBe('invalid_client');
  } else {
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    expect((error as oauth.ResponseBodyError).error).toBe('invalid_client');
    expect((error as oauth.ResponseBodyError).status).toBe(401);
  }
}

async function checkToken(token: string, scope: string) {
  const jwks = createRemoteJWKSet(new URL(`${publicUrl}/api/oauth/jwks.json`));
  const { payload } = await jwtVerify(token, jwks, { issuer: publicUrl });
  expect(payload).toMatchObject({ app_id: app.id, client_id: app.client_id, sub: app.id, token_type: 'app', scope });
  const bases = await openApi(token, '/bases');
  expect(bases.status).toBe(200);
  expect(bases.body.data.map((b: any) => b.id)).toEqual([baseId]);
  const records = await openApi(token, `/bases/${baseId}/tables/${tableId}/records`);
  expect(records.status).toBe(200);
  expect(records.body.data.map((r: any) => Object.values(r.values))).toContainEqual(['seen by clients']);
}

describe('the server over HTTP', () => {
  it('publishes RFC 8414 metadata whose issuer is PUBLIC_URL', async () => {
    const res = await fetch(`${publicUrl}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const meta = (await res.json()) as any;
    expect(meta).toMatchObject({
      issuer: publicUrl, token_endpoint: `${publicUrl}/api/oauth/token`, jwks_uri: `${publicUrl}/api/oauth/jwks.json`,
      grant_types_supported: ['client_credentials'], token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
  });
});

describe('openid-client v6', () => {
  const discover = (auth: client.ClientAuth) =>
    client.discovery(new URL(publicUrl), app.client_id, undefined, auth, { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });

  it('discovers the server and gets a token with client_secret_post, then calls the Open API', async () => {
    const config = await discover(client.ClientSecretPost(app.client_secret));
    expect(config.serverMetadata().token_endpoint).toBe(`${publicUrl}/api/oauth/token`);
    const tokens = await client.clientCredentialsGrant(config, { scope: 'base:read record:read' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(7200);
    expect(tokens.scope).toBe('base:read record:read');
    await checkToken(tokens.access_token, 'base:read record:read');

    // The library's own protected-resource call.
    const res = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${publicUrl}/api/open/v1/bases/${baseId}`), 'GET');
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data.id).toBe(baseId);
  });

  it('discovers the server and gets a token with client_secret_basic, then calls the Open API', async () => {
    const config = await discover(client.ClientSecretBasic(app.client_secret));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'base:read record:read' });
    expect(tokens.expires_in).toBe(7200);
    await checkToken(tokens.access_token, 'base:read record:read');
    const created = await openApi(tokens.access_token, `/bases/${baseId}/tables/${tableId}/records`, { method: 'POST', body: { Name: 'not allowed' } });
    expect(created.status).toBe(403);
    expect(created.body.error).toBe('forbidden');
  });

  it('without a scope gets every granted scope, and can write', async () => {
    const config = await discover(client.ClientSecretPost(app.client_secret));
    const tokens = await client.clientCredentialsGrant(config);
    expect(tokens.scope).toBe('base:read record:read record:write');
    const created = await openApi(tokens.access_token, `/bases/${baseId}/tables/${tableId}/records`, { method: 'POST', body: { Name: 'written by openid-client' } });
    expect(created.status).toBe(201);
  });

  it('surfaces the server\'s OAuth errors: a wrong secret is invalid_client (401), a scope beyond the grant invalid_scope (403)', async () => {
    for (const [auth, basic] of [
      [client.ClientSecretPost('os_wrongwrongwrongwrongwrongwrongwrong'), false],
      [client.ClientSecretBasic('os_wrongwrongwrongwrongwrongwrongwrong'), true],
    ] as const) {
      const config = await discover(auth);
      const error = await client.clientCredentialsGrant(config).then(() => null, (e: unknown) => e);
      await expectInvalidClient(error, basic);
    }
    const config = await discover(client.ClientSecretPost(app.client_secret));
    const error = await client.clientCredentialsGrant(config, { scope: 'table:read' }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(client.ResponseBodyError);
    expect((error as client.ResponseBodyError).error).toBe('invalid_scope');
    expect((error as client.ResponseBodyError).status).toBe(403);
  });
});

describe('oauth4webapi v3', () => {
  let as: oauth.AuthorizationServer;
  const insecure = { [oauth.allowInsecureRequests]: true } as const;
  const oauthClient = () => ({ client_id: app.client_id });

  beforeAll(async () => {
    const issuer = new URL(publicUrl);
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
    as = await oauth.processDiscoveryResponse(issuer, response);
  });

  it('discovers the token endpoint and the JWKS', () => {
    expect(as.issuer).toBe(publicUrl);
    expect(as.token_endpoint).toBe(`${publicUrl}/api/oauth/token`);
    expect(as.jwks_uri).toBe(`${publicUrl}/api/oauth/jwks.json`);
  });

  it('gets a token with ClientSecretBasic and calls the Open API', async () => {
    const response = await oauth.clientCredentialsGrantRequest(as, oauthClient(), oauth.ClientSecretBasic(app.client_secret), { scope: 'base:read record:read' }, insecure);
    const result = await oauth.processClientCredentialsResponse(as, oauthClient(), response);
    expect(result.token_type).toBe('bearer');
    expect(result.expires_in).toBe(7200);
    expect(result.scope).toBe('base:read record:read');
    await checkToken(result.access_token, 'base:read record:read');
  });

  it('gets a token with ClientSecretPost and calls the Open API', async () => {
    const response = await oauth.clientCredentialsGrantRequest(as, oauthClient(), oauth.ClientSecretPost(app.client_secret), { scope: 'record:read record:write' }, insecure);
    const result = await oauth.processClientCredentialsResponse(as, oauthClient(), response);
    expect(result.scope).toBe('record:read record:write');
    const res = await oauth.protectedResourceRequest(result.access_token, 'POST', new URL(`${publicUrl}/api/open/v1/bases/${baseId}/tables/${tableId}/records`),
      new Headers({ 'content-type': 'application/json' }), JSON.stringify({ Name: 'written by oauth4webapi' }), insecure);
    expect(res.status).toBe(201);
    const body = (await res.json()) as any;
    expect(Object.values(body.data.values)).toEqual(['written by oauth4webapi']);
    // record:read without base:read: the base list is refused.
    const bases = await openApi(result.access_token, '/bases');
    expect(bases.status).toBe(403);
  });

  it('a wrong secret is an invalid_client error from the library, with either method', async () => {
    for (const [auth, basic] of [
      [oauth.ClientSecretBasic('os_wrongwrongwrongwrongwrongwrongwrong'), true],
      [oauth.ClientSecretPost('os_wrongwrongwrongwrongwrongwrongwrong'), false],
    ] as const) {
      const response = await oauth.clientCredentialsGrantRequest(as, oauthClient(), auth, {}, insecure);
      expect(response.status).toBe(401);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const error = await oauth.processClientCredentialsResponse(as, oauthClient(), response).then(() => null, (e: unknown) => e);
      await expectInvalidClient(error, basic);
    }
  });
});
