// The plugin host end to end: upload, lifecycle, configuration, installations, RPC with its checks, storage,
// the network proxy and the signed sandbox loader.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient } from './helpers.js';
import { testSql } from './database.js';

const EXAMPLES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'examples');

/** Zips a folder of examples/ with manifest changes applied. */
async function pack(example: string, patch: Record<string, unknown> = {}, extra: Record<string, string> = {}): Promise<Buffer> {
  const zip = new JSZip();
  const dir = path.join(EXAMPLES, example);
  for (const f of fs.readdirSync(dir)) {
    if (f === 'manifest.json') continue;
    zip.file(f, fs.readFileSync(path.join(dir, f)));
  }
  const manifest = { ...JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')), ...patch };
  zip.file('manifest.json', JSON.stringify(manifest));
  for (const [name, content] of Object.entries(extra)) zip.file(name, content);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

let c: TestClient;
let upstream: http.Server;
let upstreamPort: number;

async function upload(zip: Buffer, token?: string, multipart = true) {
  const headers: Record<string, string> = { authorization: `Bearer ${token ?? c.adminToken}` };
  let body: BodyInit;
  if (multipart) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(zip)]), 'plugin.stplugin.zip');
    body = form;
  } else {
    headers['content-type'] = 'application/zip';
    body = new Uint8Array(zip);
  }
  const res = await c.app.fetch(new Request('http://test.local/api/plugins/upload', { method: 'POST', headers, body }));
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 3000);
    if (req.url === '/redirect-private') return void res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end();
    if (req.url === '/big') return void res.end(Buffer.alloc(2_000_000, 97));
    if (req.url === '/bin') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 2, 255]));
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'a=b', 'x-upstream': 'yes' });
    res.end(JSON.stringify({ method: req.method, url: req.url, cookie: req.headers.cookie ?? null, auth: req.headers.authorization ?? null, custom: req.headers['x-custom'] ?? null }));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamPort = (upstream.address() as AddressInfo).port;
  c = await makeApp({ PLUGIN_PROXY_ALLOW_PRIVATE: `localhost:${upstreamPort},127.0.0.1:${upstreamPort}`, PLUGIN_PROXY_TIMEOUT_MS: '1000', PLUGIN_PROXY_MAX_BYTES: '1000000', PLUGIN_PROXY_RATE_PER_MINUTE: '20' });
});
afterAll(async () => {
  await c.close();
  upstream.close();
});

describe('packages and lifecycle', () => {
  it('uploads the examples (multipart and raw zip); a first upload is disabled', async () => {
    const ui = await upload(await pack('record-tagger'));
    expect(ui.status).toBe(201);
    expect(ui.body.data).toMatchObject({ id: 'com.example.record-tagger', type: 'ui', version: '1.0.0', status: 'disabled', consecutive_failures: 0, versions: [{ version: '1.0.0' }] });
    const script = await upload(await pack('row-stats'), undefined, false);
    expect(script.status).toBe(201);
    expect(script.body.data).toMatchObject({ id: 'com.example.row-stats', type: 'script', endpoints: [{ name: 'summary' }] });
  });

  it('refuses a bad package with every problem and stores nothing', async () => {
    const bad = await upload(await pack('record-tagger', { id: 'com.example.bad', apiVersion: '2', entry: 'missing.js', extensionPoints: [{ type: 'side-panel' }] }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('INVALID_PACKAGE');
    expect(bad.body.details.length).toBeGreaterThanOrEqual(3);
    expect((await c.request('GET', '/api/plugins/com.example.bad')).status).toBe(404);
  });

  it('only system administrators upload, change status, roll back and uninstall', async () => {
    const u = await c.user('Plain');
    expect((await upload(await pack('record-tagger', { version: '9.0.0' }), u.token)).status).toBe(403);
    expect((await c.request('PUT', '/api/plugins/com.example.record-tagger/status', { token: u.token, body: { action: 'enable' } })).status).toBe(403);
    expect((await c.request('DELETE', '/api/plugins/com.example.record-tagger', { token: u.token })).status).toBe(403);
  });

  it('upgrades only to a higher version, keeps every version, rolls back, and keeps status', async () => {
    const id = 'com.example.versioned';
    expect((await upload(await pack('record-tagger', { id }))).status).toBe(201);
    await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'enable' } });
    await c.request('PUT', `/api/plugins/${id}/config?scope=global`, { body: { config: { note: 'kept' } } });
    const same = await upload(await pack('record-tagger', { id }));
    expect(same.status).toBe(409);
    expect(same.body.error).toBe('VERSION_NOT_HIGHER');
    const up = await upload(await pack('record-tagger', { id, version: '1.1.0' }));
    expect(up.body.data).toMatchObject({ version: '1.1.0', status: 'enabled', versions: [{ version: '1.1.0' }, { version: '1.0.0' }] });
    expect((await upload(await pack('record-tagger', { id, version: '1.0.5' }))).status).toBe(409);
    const back = await c.request('POST', `/api/plugins/${id}/rollback`, { body: { version: '1.0.0' } });
    expect(back.body.data).toMatchObject({ version: '1.0.0', status: 'enabled' });
    expect((await c.request('POST', `/api/plugins/${id}/rollback`, { body: { version: '3.0.0' } })).status).toBe(404);
    expect((await c.request('GET', `/api/plugins/${id}/config?scope=global`)).body.data.config).toEqual({ note: 'kept' });
    expect((await c.request('DELETE', `/api/plugins/${id}`)).body.data).toEqual({ id, deleted: true });
    expect((await c.request('GET', `/api/plugins/${id}`)).status).toBe(404);
  });

  it('status: enable, disable, restore only from error', async () => {
    const id = 'com.example.record-tagger';
    expect((await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'restore' } })).status).toBe(409);
    expect((await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'enable' } })).body.data.status).toBe('enabled');
    for (let i = 0; i < 5; i++) await c.app.services.plugins.recordOutcome(id, true);
    expect((await c.request('GET', `/api/plugins/${id}`)).body.data).toMatchObject({ status: 'error', consecutive_failures: 5 });
    expect((await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'restore' } })).body.data).toMatchObject({ status: 'enabled', consecutive_failures: 0 });
    expect((await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'pause' } })).status).toBe(400);
  });
});

describe('configuration and installations', () => {
  it('validates against configSchema and deep-merges base over global', async () => {
    const id = 'com.example.record-tagger';
    const me = (await c.request('GET', '/api/auth/me')).body.data;
    const bad = await c.request('PUT', `/api/plugins/${id}/config?scope=global`, { body: { config: { field: 5 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('INVALID_CONFIG');
    expect((await c.request('PUT', `/api/plugins/${id}/config?scope=global`, { body: { config: { field: 'Notes', note: 'global' } } })).status).toBe(200);
    const base = await c.request('PUT', `/api/plugins/${id}/config?scope=base&base_id=${me.default_base_id}`, { body: { config: { note: 'base' } } });
    expect(base.body.data).toEqual({ scope: 'base', base_id: me.default_base_id, config: { note: 'base' }, effective: { field: 'Notes', note: 'base' } });
    expect((await c.request('GET', `/api/plugins/${id}/config?scope=base`)).status).toBe(400);
  });

  it('installs ui plugins in bases (400 for a script plugin); base admins only', async () => {
    const owner = await c.user('Owner');
    const viewer = await c.user('Viewer');
    await c.request('PUT', `/api/v1/bases/${owner.defaultBaseId}/members/${viewer.id}`, { token: owner.token, body: { role: 'viewer' } });
    const ui = 'com.example.record-tagger';
    expect((await c.request('POST', `/api/plugins/${ui}/installations`, { token: viewer.token, body: { base_id: owner.defaultBaseId } })).status).toBe(403);
    const inst = await c.request('POST', `/api/plugins/${ui}/installations`, { token: owner.token, body: { base_id: owner.defaultBaseId } });
    expect(inst.status).toBe(201);
    expect(inst.body.data.installation).toEqual({ installed: true, enabled: true });
    expect((await c.request('POST', '/api/plugins/com.example.row-stats/installations', { token: owner.token, body: { base_id: owner.defaultBaseId } })).status).toBe(400);
    const off = await c.request('PUT', `/api/plugins/${ui}/installations`, { token: owner.token, body: { base_id: owner.defaultBaseId, enabled: false } });
    expect(off.body.data.installation).toEqual({ installed: true, enabled: false });
    const list = await c.request('GET', `/api/plugins?base_id=${owner.defaultBaseId}`, { token: viewer.token });
    expect(list.body.data.find((p: any) => p.id === ui).installation).toEqual({ installed: true, enabled: false });
    expect(list.body.data.find((p: any) => p.id === 'com.example.row-stats').installation).toBeUndefined();
    const removed = await c.request('DELETE', `/api/plugins/${ui}/installations?base_id=${owner.defaultBaseId}`, { token: owner.token });
    expect(removed.body.data.installation).toEqual({ installed: false, enabled: false });
  });
});

describe('RPC, storage, proxy and sandbox', () => {
  let owner: Awaited<ReturnType<TestClient['user']>>;
  let viewer: Awaited<ReturnType<TestClient['user']>>;
  let tableId: string;
  let recordId: string;
  const ui = 'com.example.record-tagger';
  const rpc = (token: string, method: string, params: unknown = {}, extra: Record<string, unknown> = {}) =>
    c.request('POST', `/api/plugins/${ui}/rpc`, { token, body: { base_id: owner.defaultBaseId, method, params, ...extra } });

  beforeAll(async () => {
    owner = await c.user('RpcOwner');
    viewer = await c.user('RpcViewer');
    await c.request('PUT', `/api/v1/bases/${owner.defaultBaseId}/members/${viewer.id}`, { token: owner.token, body: { role: 'viewer' } });
    tableId = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Notes', type: 'text' }], { baseId: owner.defaultBaseId, token: owner.token });
    recordId = (await c.request('POST', `/api/v1/tables/${tableId}/records`, { token: owner.token, body: { fields: { Name: 'first' } } })).body.data.id;
    await c.request('PUT', `/api/plugins/${ui}/status`, { body: { action: 'enable' } });
  });

  it('refuses calls of a plugin not installed in the base, then serves them once installed', async () => {
    const r = await rpc(owner.token, 'table.listTables');
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('PERMISSION_DENIED');
    await c.request('POST', `/api/plugins/${ui}/installations`, { token: owner.token, body: { base_id: owner.defaultBaseId } });
    const tables = await rpc(owner.token, 'table.listTables');
    expect(tables.body.data.result).toEqual([expect.objectContaining({ id: tableId })]);
  });

  it('acts as the user: reads for viewers, writes for editors, every write through the record service', async () => {
    const read = await rpc(viewer.token, 'table.getRecords', { tableId, page: 1, per_page: 10 });
    expect(read.body.data.result).toMatchObject({ total: 1, items: [{ id: recordId, values: { Name: 'first', Notes: null } }] });
    const denied = await rpc(viewer.token, 'record.update', { tableId, recordId, values: { Notes: 'x' } });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('PERMISSION_DENIED');
    const ok = await rpc(owner.token, 'record.update', { recordId, values: { Notes: 'tagged' } });
    expect(ok.body.data.result).toMatchObject({ id: recordId, values: { Notes: 'tagged' } });
    const bad = await rpc(owner.token, 'record.update', { recordId, values: { Nope: 1 } });
    expect(bad.status).toBe(400);
    const created = await rpc(owner.token, 'record.create', { tableId, values: { Name: 'second' } });
    expect(created.status).toBe(200);
    const del = await rpc(owner.token, 'record.delete', { recordId: created.body.data.result.id });
    expect(del.body.data.result).toEqual({ id: created.body.data.result.id, deleted: true });
    const schema = await rpc(viewer.token, 'table.getSchema', { tableId });
    expect(schema.body.data.result.fields.map((f: any) => f.name)).toEqual(['Name', 'Notes']);
    expect((await rpc(owner.token, 'table.getRecords', { tableId: 'tblother' })).status).toBe(404);
    expect((await rpc(owner.token, 'nope.method')).body.error).toBe('METHOD_NOT_FOUND');
    const outsider = await c.user('Outsider');
    expect((await rpc(outsider.token, 'table.listTables')).body.error).toBe('PERMISSION_DENIED');
  });

  it('refuses methods whose permission the manifest does not declare', async () => {
    const id = 'com.example.readonly';
    await upload(await pack('record-tagger', { id, permissions: { records: 'read' } }));
    await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'enable' } });
    await c.request('POST', `/api/plugins/${id}/installations`, { token: owner.token, body: { base_id: owner.defaultBaseId } });
    const call = (method: string, params: unknown) => c.request('POST', `/api/plugins/${id}/rpc`, { token: owner.token, body: { base_id: owner.defaultBaseId, method, params } });
    expect((await call('table.getRecord', { tableId, recordId })).status).toBe(200);
    for (const [method, params] of [['record.update', { recordId, values: {} }], ['table.listTables', {}], ['storage.get', { key: 'k' }]] as const) {
      const r = await call(method, params);
      expect(r.status, method).toBe(403);
      expect(r.body.error).toBe('PERMISSION_DENIED');
    }
    const proxy = await c.request('POST', `/api/plugins/${id}/proxy`, { token: owner.token, body: { base_id: owner.defaultBaseId, url: `http://localhost:${upstreamPort}/` } });
    expect(proxy.body.error).toBe('PERMISSION_DENIED');
    await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'disable' } });
    expect((await call('table.getRecord', { tableId, recordId })).body.error).toBe('PLUGIN_DISABLED');
  });

  it('storage: per plugin and base, 64 KiB values, 1000 keys; config.get is the effective configuration', async () => {
    expect((await rpc(owner.token, 'storage.set', { key: 'k', value: { a: 1 } })).body.data.result).toEqual({ key: 'k', stored: true });
    expect((await rpc(viewer.token, 'storage.get', { key: 'k' })).body.data.result).toEqual({ a: 1 });
    const big = await rpc(owner.token, 'storage.set', { key: 'big', value: 'x'.repeat(70_000) });
    expect(big.status).toBe(413);
    for (let i = 0; i < 999; i++) await testSql(c.app).run('INSERT INTO plugin_storage (plugin_id, base_id, key, value) VALUES (?, ?, ?, ?)', [ui, owner.defaultBaseId, `fill${i}`, '1']);
    expect((await rpc(owner.token, 'storage.set', { key: 'one-more', value: 1 })).status).toBe(409);
    expect((await rpc(owner.token, 'storage.set', { key: 'k', value: 2 })).status).toBe(200);
    expect((await rpc(owner.token, 'storage.remove', { key: 'k' })).body.data.result).toEqual({ removed: true });
    expect((await rpc(owner.token, 'storage.get', { key: 'k' })).body.data.result).toBeNull();
    expect((await rpc(viewer.token, 'config.get')).body.data.result).toEqual({ field: 'Notes', note: 'global' });
  });

  it('sandbox URL: signed loader with the CSP, signed files, selection snapshot for ui.getContext and selection.get', async () => {
    const ids = Array.from({ length: 1200 }, (_, i) => `rec${i}`);
    const r = await c.request('POST', `/api/plugins/${ui}/sandbox-url`, {
      token: viewer.token,
      body: { base_id: owner.defaultBaseId, table_id: tableId, extension_point: 'toolbar-button', selection: { recordIds: ids, total: 1500, selectAll: true, scope: 'view' } },
    });
    expect(r.status).toBe(200);
    const { url, handshake_token: ht, expires_at: exp } = r.body.data;
    expect(new Date(exp).getTime() - Date.now()).toBeGreaterThan(590_000);
    const loader = await c.app.fetch(new Request(url));
    expect(loader.status).toBe(200);
    const csp = loader.headers.get('content-security-policy')!;
    expect(csp).toMatch(/sandbox allow-scripts(;|$)/);
    expect(csp).not.toMatch(/allow-same-origin/);
    expect(csp).toMatch(/connect-src 'none'/);
    const html = await loader.text();
    expect(html).toMatch(/<div id="app"><\/div>/);
    const order = ['vue.global.js', 'table-sdk.js', 'table-sdk-assets', 'main.js'].map((s) => html.indexOf(s));
    expect(order.every((v, i) => v > 0 && (i === 0 || v > order[i - 1]))).toBe(true);
    const entry = /src="([^"]*main\.js[^"]*)"/.exec(html)![1].replace(/&amp;/g, '&');
    const file = await c.app.fetch(new Request(`http://test.local${entry}`));
    expect(file.status).toBe(200);
    expect(file.headers.get('content-security-policy')).toBe(csp);
    expect(await file.text()).toMatch(/TableSDK\.ready/);
    const tampered = await c.app.fetch(new Request(`http://test.local${entry.replace('main.js', 'style.css')}`));
    expect(tampered.status).toBe(403);
    const altered = await c.app.fetch(new Request(url.replace(/sig=[^&]+/, 'sig=AAAA')));
    expect(altered.status).toBe(403);
    const noSig = await c.app.fetch(new Request(url.replace(/&sig=[^&]+/, '')));
    expect(noSig.status).toBe(403);
    const vue = await c.app.fetch(new Request('http://test.local/api/plugins/_runtime/vue.global.js'));
    expect(vue.status).toBe(200);
    const ctx = await rpc(viewer.token, 'ui.getContext', {}, { handshake_token: ht });
    expect(ctx.body.data.result).toMatchObject({ pluginId: ui, baseId: owner.defaultBaseId, tableId, extensionPoint: 'toolbar-button' });
    const sel = (await rpc(viewer.token, 'selection.get', {}, { handshake_token: ht })).body.data.result;
    expect(sel).toMatchObject({ total: 1500, truncated: true, selectAll: true, scope: 'view' });
    expect(sel.recordIds).toHaveLength(1000);
    const wrongPoint = await c.request('POST', `/api/plugins/${ui}/sandbox-url`, { token: viewer.token, body: { base_id: owner.defaultBaseId, extension_point: 'home-menu' } });
    expect(wrongPoint.status).toBe(400);
  });

  it('proxy: allow-list, private addresses refused, headers filtered both ways, timeout, size cap, rate limit', async () => {
    const id = 'com.example.net';
    await upload(await pack('record-tagger', { id, permissions: { network: ['localhost', 'example.com'] } }));
    await c.request('PUT', `/api/plugins/${id}/status`, { body: { action: 'enable' } });
    await c.request('POST', `/api/plugins/${id}/installations`, { token: owner.token, body: { base_id: owner.defaultBaseId } });
    const proxy = (body: Record<string, unknown>) => c.request('POST', `/api/plugins/${id}/proxy`, { token: owner.token, body: { base_id: owner.defaultBaseId, ...body } });
    const ok = await proxy({ url: `http://localhost:${upstreamPort}/hello`, method: 'POST', headers: { Cookie: 'secret', Authorization: 'Bearer x', 'X-Custom': 'kept' }, body: 'hi' });
    expect(ok.status).toBe(200);
    expect(ok.body.data.status).toBe(200);
    expect(ok.body.data.body_encoding).toBe('text');
    expect(JSON.parse(ok.body.data.body)).toEqual({ method: 'POST', url: '/hello', cookie: null, auth: null, custom: 'kept' });
    expect(ok.body.data.headers['set-cookie']).toBeUndefined();
    expect(ok.body.data.headers['x-upstream']).toBe('yes');
    const bin = await proxy({ url: `http://localhost:${upstreamPort}/bin` });
    expect(bin.body.data).toMatchObject({ body_encoding: 'base64', body: Buffer.from([0, 1, 2, 255]).toString('base64') });
    expect((await proxy({ url: 'http://evil.test/' })).body.error).toBe('PERMISSION_DENIED');
    expect((await proxy({ url: `http://notexample.com/` })).body.error).toBe('PERMISSION_DENIED');
    expect((await proxy({ url: 'ftp://example.com/' })).body.error).toBe('SSRF_BLOCKED');
    expect((await proxy({ url: `http://localhost:${upstreamPort}/redirect-private` })).body.error).toBe('SSRF_BLOCKED');
    expect((await proxy({ url: 'http://localhost:9/' })).body.error).toBe('SSRF_BLOCKED');
    expect((await proxy({ url: `http://localhost:${upstreamPort}/slow` })).body.error).toBe('UPSTREAM_TIMEOUT');
    expect((await proxy({ url: `http://localhost:${upstreamPort}/big` })).body.error).toBe('RESPONSE_TOO_LARGE');
    let limited = 0;
    for (let i = 0; i < 20; i++) if ((await proxy({ url: `http://localhost:${upstreamPort}/` })).status === 429) limited++;
    expect(limited).toBeGreaterThan(0);
  });
});
