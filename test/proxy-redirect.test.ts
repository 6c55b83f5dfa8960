// The plugin proxy's allow-list holds on every redirect hop: a hop to a host outside it is a 403 SSRF_BLOCKED before
// the name is even resolved.
import dns from 'node:dns';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import JSZip from 'jszip';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { makeApp, type TestClient } from './helpers.js';

const EXAMPLE = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'examples', 'record-tagger');
const PLUGIN = 'com.example.redirects';

let c: TestClient;
let upstream: http.Server;
let port: number;
let owner: { token: string; defaultBaseId: string };
let lookupSpy: MockInstance;
/** Every name the process asked DNS about while a test ran. */
let asked: string[];

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    if (req.url === '/to-outside') return void res.writeHead(302, { location: 'http://not-allowed.example/' }).end();
    if (req.url === '/to-localhost') return void res.writeHead(302, { location: `http://localhost:${port}/` }).end();
    if (req.url === '/to-inside') return void res.writeHead(302, { location: `http://127.0.0.1:${port}/landed` }).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`ok ${req.url}`);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  port = (upstream.address() as AddressInfo).port;
  c = await makeApp({ PLUGIN_PROXY_ALLOW_PRIVATE: `127.0.0.1:${port},localhost:${port}`, PLUGIN_PROXY_TIMEOUT_MS: '2000' });

  // A ui plugin whose network allow-list is only the upstream's IP literal, enabled and installed in a user's base.
  const zip = new JSZip();
  for (const f of fs.readdirSync(EXAMPLE)) if (f !== 'manifest.json') zip.file(f, fs.readFileSync(path.join(EXAMPLE, f)));
  const manifest = JSON.parse(fs.readFileSync(path.join(EXAMPLE, 'manifest.json'), 'utf8'));
  zip.file('manifest.json', JSON.stringify({ ...manifest, id: PLUGIN, permissions: { ...manifest.permissions, network: ['127.0.0.1'] } }));
  const res = await c.app.fetch(new Request('http://test.local/api/plugins/upload', {
    method: 'POST',
    headers: { authorization: `Bearer ${c.adminToken}`, 'content-type': 'application/zip' },
    body: new Uint8Array(await zip.generateAsync({ type: 'nodebuffer' })),
  }));
  expect(res.status).toBe(201);
  expect((await c.request('PUT', `/api/plugins/${PLUGIN}/status`, { body: { action: 'enable' } })).status).toBe(200);
  owner = await c.user('Owner');
  expect((await c.request('POST', `/api/plugins/${PLUGIN}/installations`, { token: owner.token, body: { base_id: owner.defaultBaseId } })).status).toBe(201);
});
afterAll(async () => {
  await c.close();
  upstream.close();
});

beforeEach(() => {
  asked = [];
  const real = dns.lookup;
  // The guard resolves through dns.lookup; the made-up name fails at once (as it would in DNS) so that code which
  // does look it up fails the assertions below rather than waiting for a resolver.
  lookupSpy = vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, options: unknown, callback: (...a: unknown[]) => void) => {
    asked.push(hostname);
    if (hostname === 'not-allowed.example') {
      return void process.nextTick(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []));
    }
    return (real as (...a: unknown[]) => void)(hostname, options, callback);
  }) as never);
});
afterEach(() => lookupSpy.mockRestore());

const proxy = (url: string) => c.request('POST', `/api/plugins/${PLUGIN}/proxy`, { token: owner.token, body: { base_id: owner.defaultBaseId, url } });

describe('plugin proxy redirects and the allow-list', () => {
  it('refuses a redirect from an allowed host to a name outside the allow-list, without resolving it', async () => {
    const res = await proxy(`http://127.0.0.1:${port}/to-outside`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 403, msg: expect.stringMatching(/not-allowed\.example/), error: 'SSRF_BLOCKED', data: null, request_id: expect.any(String) });
    expect(asked).not.toContain('not-allowed.example');
  });

  it('refuses a redirect to a name outside the allow-list even when it would resolve to an exempt address', async () => {
    const res = await proxy(`http://127.0.0.1:${port}/to-localhost`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('SSRF_BLOCKED');
    expect(asked).not.toContain('localhost');
  });

  it('follows a redirect that stays inside the allow-list', async () => {
    const res = await proxy(`http://127.0.0.1:${port}/to-inside`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 200, body: 'ok /landed', body_encoding: 'text' });
  });

  it('still answers PERMISSION_DENIED for a first URL outside the allow-list, also without DNS', async () => {
    const res = await proxy('http://not-allowed.example/');
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('PERMISSION_DENIED');
    expect(asked).not.toContain('not-allowed.example');
  });
});
