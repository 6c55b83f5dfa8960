// Several real server processes over one PostgreSQL database (contract section 11): a logout or a revocation on one is
// refused by the others within 1 s, schema changes are seen at once, every queued workflow run executes exactly once
// whichever process queued it, a killed process loses nothing, and WORKERS=N starts N processes on one port. Runs in
// the PostgreSQL pass of `npm test`; WORKERS' refusal without PostgreSQL runs in both.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';
import { ENGINE, freshDatabaseUrl } from './database.js';
import { api, client, freePort, login, removeDir, startServer, stopAllServers, tempDir, type Client, type ServerProcess } from './server-process.js';

const PUBLIC_URL = 'http://tables.test';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` every `everyMs` until it holds; returns the milliseconds it took, or throws after `ms`. Slow polls
 * where runs are awaited: the runner steps aside while requests keep arriving.
 */
async function within(ms: number, check: () => Promise<boolean>, everyMs = 25): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check()) return Date.now() - started;
    await sleep(everyMs);
  }
  throw new Error(`not within ${ms} ms`);
}

describe('WORKERS', () => {
  it('above 1 needs PostgreSQL: a SQLite start is refused naming WORKERS', () => {
    expect(() => readConfig({ WORKERS: '2' })).toThrow(/^WORKERS above 1 needs DATABASE_URL/);
    expect(readConfig({ WORKERS: '2', DATABASE_URL: 'postgres://x@127.0.0.1/db' }).workers).toBe(2);
  });
});

describe.runIf(ENGINE === 'postgres')('several processes over one PostgreSQL database', () => {
  let databaseUrl: string;
  const dirs: string[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  let ca: Client;
  let cb: Client;
  let hook: http.Server;
  let hookPort: number;
  const hookDelayMs = 1500;

  async function start(env: Record<string, string> = {}) {
    const dataDir = tempDir('ts-multi-');
    dirs.push(dataDir);
    return startServer({
      dataDir, env: { DATABASE_URL: databaseUrl, PUBLIC_URL, PLUGIN_PROXY_ALLOW_PRIVATE: `127.0.0.1:${hookPort}`, WORKFLOW_LEASE_SECONDS: '3', ...env },
    });
  }

  beforeAll(async () => {
    // A slow webhook: workflow runs that call it are in flight long enough to be cut off by a kill.
    hookPort = await freePort();
    hook = http.createServer((_req, res) => setTimeout(() => res.end('{"ok":true}'), hookDelayMs));
    await new Promise<void>((resolve) => hook.listen(hookPort, '127.0.0.1', resolve));
    databaseUrl = (await freshDatabaseUrl())!;
    a = await start();
    b = await start();
    ca = client(a.url, await login(a.url));
    cb = client(b.url, await login(b.url));
  }, 120_000);

  afterAll(async () => {
    await stopAllServers();
    hook?.close();
    for (const d of dirs) removeDir(d);
  });

  it('a token issued by one is accepted by the other; a logout on one is refused by the other within 1 s', async () => {
    const token = await login(a.url);
    expect((await api(b.url, 'GET', '/api/auth/me', { token })).status).toBe(200);
    expect((await api(a.url, 'POST', '/api/auth/logout', { token })).status).toBe(200);
    const ms = await within(1000, async () => (await api(b.url, 'GET', '/api/auth/me', { token })).status === 401);
    expect(ms).toBeLessThan(1000);
  });

  it("an application token revoked on one is refused by the other within 1 s; the application's deletion too", async () => {
    const base = (await ca.data('GET', '/api/v1/bases')).items[0].id;
    const app = await ca.data('POST', '/api/oauth/apps', { app_name: 'Multi', callback_url: 'https://c.example/cb', scopes: ['base:read'], allowed_bases: [base] }, 201);
    const issue = async (url: string) => (await api(url, 'POST', '/api/oauth/token', {
      raw: `grant_type=client_credentials&client_id=${app.client_id}&client_secret=${app.client_secret}`, headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })).body.access_token as string;
    const revoked = await issue(b.url);
    const kept = await issue(a.url);
    expect((await api(a.url, 'GET', '/api/open/v1/bases', { token: revoked })).status).toBe(200);
    const jti = JSON.parse(Buffer.from(revoked.split('.')[1], 'base64url').toString()).jti;
    await ca.data('POST', `/api/oauth/apps/${app.id}/tokens/revoke`, { jti });
    await within(1000, async () => (await api(b.url, 'GET', '/api/open/v1/bases', { token: revoked })).status === 401);
    expect((await api(b.url, 'GET', '/api/open/v1/bases', { token: kept })).status).toBe(200);
    await cb.data('DELETE', `/api/oauth/apps/${app.id}`);
    await within(1000, async () => (await api(a.url, 'GET', '/api/open/v1/bases', { token: kept })).status === 401);
  });

  it("an application's write limit holds for the sum of its writes through both processes", async () => {
    const base = (await ca.data('GET', '/api/v1/bases')).items[0].id;
    const t = await ca.data('POST', '/api/v1/tables', { name: 'Limited', base_id: base, fields: [{ name: 'Name', type: 'text' }] }, 201);
    const app = await ca.data('POST', '/api/oauth/apps', {
      app_name: 'Writer', callback_url: 'https://c.example/cb', scopes: ['record:write'], allowed_bases: [base], write_rate_limit_per_minute: 5,
    }, 201);
    const token = (await api(b.url, 'POST', '/api/oauth/token', {
      raw: `grant_type=client_credentials&client_id=${app.client_id}&client_secret=${app.client_secret}`, headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })).body.access_token as string;
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await api(i % 2 ? b.url : a.url, 'POST', `/api/open/v1/bases/${base}/tables/${t.id}/records`, { token, body: { Name: `w${i}` } });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429, 429]);
  });

  it('a table renamed and a field added on one are seen by the other', async () => {
    const t = await ca.data('POST', '/api/v1/tables', { name: 'Shared', fields: [{ name: 'Name', type: 'text' }] }, 201);
    await cb.data('POST', `/api/v1/tables/${t.id}/records`, { fields: { Name: 'x' } }, 201); // B has read (and cached) the fields
    await ca.data('PUT', `/api/v1/tables/${t.id}`, { name: 'Renamed' });
    expect((await cb.data('GET', `/api/v1/tables/${t.id}`)).name).toBe('Renamed');
    await ca.data('POST', `/api/v1/tables/${t.id}/fields`, { name: 'Extra', type: 'number' }, 201);
    await within(1000, async () => (await cb.call('POST', `/api/v1/tables/${t.id}/records`, { fields: { Name: 'y', Extra: 2 } })).status === 201);
  });

  it('1,000 workflow runs queued through both processes each run exactly once', async () => {
    const t = await ca.data('POST', '/api/v1/tables', { name: 'Runs', fields: [{ name: 'N', type: 'number' }, { name: 'Done', type: 'number' }] }, 201);
    const w = await ca.data('POST', '/api/v1/workflows', {
      name: 'count', table_id: t.id, trigger: { type: 'record_created', config: {} }, nodes: [{ type: 'update_record', config: { fields: { Done: 1 } } }],
    }, 201);
    await sleep(200); // the other process hears of the new workflow (it is announced like any change)
    for (let i = 0; i < 10; i++) {
      const c = i % 2 ? cb : ca;
      await c.data('POST', `/api/v1/tables/${t.id}/records/batch`, { action: 'create', records: Array.from({ length: 100 }, (_v, k) => ({ fields: { N: i * 100 + k } })) });
    }
    let logs: any;
    await within(60_000, async () => {
      logs = await ca.data('GET', `/api/v1/workflows/${w.id}/logs?page_size=1000`);
      return logs.total >= 1000 && logs.items.every((r: any) => r.status === 'success');
    }, 500);
    expect(logs.total).toBe(1000);
    const perRecord = new Map<string, number>();
    for (const r of logs.items) perRecord.set(r.trigger.record_id, (perRecord.get(r.trigger.record_id) ?? 0) + 1);
    expect(perRecord.size).toBe(1000);
    expect([...perRecord.values()].every((n) => n === 1)).toBe(true);
  }, 90_000);

  it('killing one process mid-run loses nothing: the other runs what was queued and fails what was cut off', async () => {
    const t = await ca.data('POST', '/api/v1/tables', { name: 'Slow', fields: [{ name: 'N', type: 'number' }] }, 201);
    const w = await ca.data('POST', '/api/v1/workflows', {
      name: 'slow', table_id: t.id, trigger: { type: 'record_created', config: {} },
      nodes: [{ type: 'http_request', config: { url: `http://127.0.0.1:${hookPort}/slow` } }],
    }, 201);
    await sleep(200);
    // B stops taking runs for a moment by being killed later; A queues 30 runs and starts on them.
    await ca.data('POST', `/api/v1/tables/${t.id}/records/batch`, { action: 'create', records: Array.from({ length: 30 }, (_v, k) => ({ fields: { N: k } })) });
    await sleep(300);
    await a.kill('SIGKILL');
    let logs: any;
    // B fails the runs A was in the middle of once their lease lapses (3 s here), and runs every other one.
    await within(60_000, async () => {
      logs = await cb.data('GET', `/api/v1/workflows/${w.id}/logs?page_size=1000`);
      return logs.total === 30 && logs.items.every((r: any) => r.status === 'success' || r.status === 'failed');
    }, 250);
    const interrupted = logs.items.filter((r: any) => r.status === 'failed');
    expect(interrupted.length).toBeGreaterThan(0);
    for (const r of interrupted) expect(r.error).toMatch(/interrupted/);
    expect(logs.items.filter((r: any) => r.status === 'success').length).toBe(30 - interrupted.length);
  }, 90_000);

  it('WORKERS=2 starts two processes on one port that serve the same data and stop together', async () => {
    const server = await start({ WORKERS: '2' });
    const token = await login(server.url);
    const bases = await api(server.url, 'GET', '/api/v1/bases', { token });
    expect(bases.status).toBe(200);
    await within(10_000, async () => (server.stdout().match(/"msg":"listening"/g) ?? []).length === 2);
    const pids = new Set([...server.stdout().matchAll(/"pid":(\d+)[^\n]*"msg":"listening"/g)].map((m) => m[1]));
    expect(pids.size).toBe(2);
    await server.stop(15_000);
    expect(server.process.exitCode).toBe(0);
  }, 60_000);
});
