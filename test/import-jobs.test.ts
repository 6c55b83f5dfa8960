// Jobs of contract section 15 over time: an import cancelled half-way, a restart (graceful, and a SIGKILL) during one,
// and the round trip of a table of every field type through export and import.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { readConfig } from '../src/config.js';
import { version } from '../src/version.js';
import { ADMIN, makeApp, makeTable, type TestClient } from './helpers.js';
import { send } from './http.js';
import { importFile, waitJob } from './import-helpers.js';
import { client, login, removeDir, startServer, stopAllServers, tempDir } from './server-process.js';
import { ENGINE } from './database.js';

let c: TestClient;
beforeAll(async () => {
  c = await makeApp();
});
afterAll(async () => {
  await stopAllServers();
  await c?.close();
});

/** A CSV of `n` rows of two columns. */
const bigCsv = (n: number) => `Name,N\n${Array.from({ length: n }, (_, i) => `row ${i},${i}`).join('\n')}\n`;

async function count(tableId: string, request = c.request): Promise<number> {
  return (await request('GET', `/api/v1/tables/${tableId}/records?page_size=1`)).body.data.total;
}

describe('cancel and restart', () => {
  it('cancels an import half-way: it stops at a chunk and keeps what it wrote', async () => {
    const tableId = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }]);
    const started = await importFile(c, `/api/v1/tables/${tableId}/import`, bigCsv(100_000), 'big.csv');
    expect(started.status).toBe(202);
    const jobId = started.body.data.job_id;
    const running = await waitJob(c, jobId, undefined, (j) => j.processed > 0);
    expect(running.status).toBe('running');
    expect(running.total).toBe(100_000); // the line count's estimate, exact here
    const cancel = await c.request('POST', `/api/v1/jobs/${jobId}/cancel`);
    expect(cancel.status).toBe(200);
    const job = await waitJob(c, jobId);
    expect(job.status).toBe('cancelled');
    expect(job.imported).toBeGreaterThan(0);
    expect(job.imported).toBeLessThan(100_000);
    expect(await count(tableId)).toBe(job.imported);
    expect(job.finished_at).toBeTruthy();
  });

  it('marks an import failed at a restart, with what it imported kept and counted', async () => {
    const dir = tempDir('ts-import-restart-');
    const env = { DATA_DIR: dir, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, PUBLIC_URL: 'http://test.local', ...(c.databaseUrl ? { DATABASE_URL: c.databaseUrl } : {}) };
    const first = await createApp(readConfig(env, version));
    const request = (app: typeof first, token: string) => (method: string, url: string, opts: Parameters<typeof send>[3] = {}) =>
      send((r) => app.fetch(r), method, `http://test.local${url}`, { token, ...opts });
    const token = (await request(first, '')('POST', '/api/auth/login', { token: null, body: ADMIN })).body.data.token;
    const r1 = request(first, token);
    const tableId = (await r1('POST', '/api/v1/tables', { body: { name: 'Restart', fields: [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }] } })).body.data.id;
    const form = new FormData();
    form.set('file', new Blob([bigCsv(100_000)]), 'big.csv');
    const jobId = (await r1('POST', `/api/v1/tables/${tableId}/import`, { raw: form })).body.data.job_id;
    for (let i = 0; i < 1000 && (await r1('GET', `/api/v1/jobs/${jobId}`)).body.data.processed === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await first.close(); // stops at the next chunk
    // Uploads no job holds: one older than an hour (a crash between upload and job) goes at the start, a recent one stays.
    const stale = path.join(dir, 'uploads', `upl_${'s'.repeat(24)}`);
    const recent = path.join(dir, 'uploads', `upl_${'r'.repeat(24)}`);
    fs.writeFileSync(stale, 'x');
    fs.writeFileSync(recent, 'x');
    fs.utimesSync(stale, new Date(Date.now() - 7_200_000), new Date(Date.now() - 7_200_000));
    const second = await createApp(readConfig(env, version));
    expect([fs.existsSync(stale), fs.existsSync(recent)]).toEqual([false, true]);
    try {
      const r2 = request(second, token);
      const job = (await r2('GET', `/api/v1/jobs/${jobId}`)).body.data;
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(/interrupted/);
      expect(job.imported).toBeGreaterThan(0);
      expect(job.imported).toBeLessThan(100_000);
      expect(await count(tableId, r2)).toBe(job.imported);
    } finally {
      await second.close();
      removeDir(dir);
    }
  });

  it('fails an import whose server was SIGKILLed once its lease lapses, keeping its rows', async () => {
    const dataDir = tempDir('ts-import-kill-');
    const env = { WORKFLOW_LEASE_SECONDS: '2', ...(c.databaseUrl ? { DATABASE_URL: c.databaseUrl } : {}) };
    try {
      const server = await startServer({ dataDir, env });
      const api = client(server.url, await login(server.url));
      const table = await api.data('POST', '/api/v1/tables', { name: 'Killed', fields: [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }] }, 201);
      const form = new FormData();
      form.set('file', new Blob([bigCsv(200_000)]), 'big.csv');
      const started = await fetch(`${server.url}/api/v1/tables/${table.id}/import`, { method: 'POST', body: form, headers: { authorization: `Bearer ${api.token}` } });
      const startedBody = await started.json();
      expect(started.status, JSON.stringify(startedBody)).toBe(202);
      const jobId = startedBody.data.job_id;
      for (let i = 0; i < 1500 && (await api.data('GET', `/api/v1/jobs/${jobId}`)).processed === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await server.kill('SIGKILL');
      const again = await startServer({ dataDir, env });
      const api2 = client(again.url, await login(again.url));
      let job = await api2.data('GET', `/api/v1/jobs/${jobId}`);
      for (let i = 0; i < 300 && job.status === 'running'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        job = await api2.data('GET', `/api/v1/jobs/${jobId}`);
      }
      expect(job.status).toBe('failed');
      expect(job.imported).toBeGreaterThan(0);
      const records = await api2.data('GET', `/api/v1/tables/${table.id}/records?page_size=1`);
      expect(records.total).toBe(job.imported);
      await again.stop();
    } finally {
      removeDir(dataDir);
    }
  });
});

describe('round trip', () => {
  it('exports a table of every field type, imports it as a new table and reads the same values back', async () => {
    const base = (await c.request('POST', '/api/v1/bases', { body: { name: 'Round trip' } })).body.data.id;
    const other = await makeTable(c, [{ name: 'Title', type: 'text' }], { baseId: base, name: 'Other' });
    const linked = (await c.request('POST', `/api/v1/tables/${other}/records`, { body: { fields: { Title: 'Linked one' } } })).body.data.id;
    const me = (await c.request('GET', '/api/auth/me')).body.data.id;
    const tableId = await makeTable(c, [
      { name: 'Text', type: 'text' }, { name: 'Long', type: 'long_text' }, { name: 'Num', type: 'number' }, { name: 'Day', type: 'date' },
      { name: 'One', type: 'single_select', options: ['red', 'blue'] }, { name: 'Many', type: 'multi_select', options: ['x', 'y'] },
      { name: 'Check', type: 'checkbox' }, { name: 'Who', type: 'user' }, { name: 'Link', type: 'link', config: { table_id: other } },
      { name: 'Mail', type: 'email' }, { name: 'Site', type: 'url' }, { name: 'Phone', type: 'phone' }, { name: 'Stars', type: 'rating' },
      { name: 'Created', type: 'created_time' }, { name: 'Modified', type: 'last_modified_time' }, { name: 'Auto', type: 'autonumber' },
      { name: 'Double', type: 'formula', config: { expression: '{Num} * 2' } }, { name: 'Titles', type: 'lookup', config: { link_field: 'Link', field: 'Title' } },
      { name: 'Links', type: 'count', config: { link_field: 'Link' } },
    ], { baseId: base, name: 'Everything' });
    const values = [
      { Text: 'héllo, "world"', Long: 'line 1\nline 2', Num: 1.5, Day: '2024-05-06', One: 'red', Many: ['x', 'y'], Check: true, Who: me, Link: [linked], Mail: 'a@b.org', Site: 'https://x.org', Phone: '+33 1 23', Stars: 4 },
      { Text: 'second', Num: -2, Day: '2024-05-07T10:00:00.000Z', One: 'blue', Check: false, Stars: 1 },
      { Text: 'third', One: 'red' },
    ];
    const made = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, { body: { action: 'create', records: values.map((fields) => ({ fields })) } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const exported = await c.request('GET', `/api/v1/tables/${tableId}/export`);
    expect(exported.status).toBe(200);
    const started = await importFile(c, `/api/v1/bases/${base}/import`, exported.text, 'Everything again.csv');
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(await waitJob(c, started.body.data.job_id)).toMatchObject({ status: 'succeeded', imported: 3, failed: 0 });
    const back = await c.request('GET', `/api/v1/tables/${started.body.data.table_id}/export`);
    expect(back.text).toBe(exported.text);
    const rows = (await c.request('GET', `/api/v1/tables/${started.body.data.table_id}/records`)).body.data.items.map((r: any) => r.fields);
    expect(rows[0]).toMatchObject({ Text: 'héllo, "world"', Long: 'line 1\nline 2', Num: 1.5, Day: '2024-05-06', Check: true, Who: me, Link: 'Linked one', Stars: 4, Double: 3, Titles: 'Linked one', Links: 1 });
    expect(rows[1]).toMatchObject({ Num: -2, Day: '2024-05-07T10:00:00.000Z', Check: false, One: 'blue' });
  });
});

// Two processes over one PostgreSQL database and one DATA_DIR (as WORKERS=2 runs them): each job runs exactly once.
describe.runIf(ENGINE === 'postgres')('jobs across processes', () => {
  it('claims every job once when two apps share the database and DATA_DIR', async () => {
    const dir = tempDir('ts-import-two-');
    const env = { DATA_DIR: dir, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, PUBLIC_URL: 'http://test.local', DATABASE_URL: c.databaseUrl! };
    const [a, b] = [await createApp(readConfig(env, version)), await createApp(readConfig(env, version))];
    try {
      const req = (app: typeof a, token?: string) => (method: string, url: string, opts: Parameters<typeof send>[3] = {}) =>
        send((r) => app.fetch(r), method, `http://test.local${url}`, { token, ...opts });
      const token = (await req(a)('POST', '/api/auth/login', { body: ADMIN })).body.data.token;
      const tableId = (await req(a, token)('POST', '/api/v1/tables', { body: { name: 'Twice', fields: [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }] } })).body.data.id;
      const jobs: string[] = [];
      for (let i = 0; i < 6; i++) {
        const form = new FormData();
        form.set('file', new Blob([bigCsv(3000)]), 'part.csv');
        const res = await req(i % 2 ? b : a, token)('POST', `/api/v1/tables/${tableId}/import`, { raw: form });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        jobs.push(res.body.data.job_id);
      }
      for (const id of jobs) {
        let job = (await req(a, token)('GET', `/api/v1/jobs/${id}`)).body.data;
        for (let i = 0; i < 1500 && ['queued', 'running'].includes(job.status); i++) {
          await new Promise((r) => setTimeout(r, 20));
          job = (await req(a, token)('GET', `/api/v1/jobs/${id}`)).body.data;
        }
        expect(job).toMatchObject({ status: 'succeeded', imported: 3000 });
      }
      expect((await req(b, token)('GET', `/api/v1/tables/${tableId}/records?page_size=1`)).body.data.total).toBe(6 * 3000);
    } finally {
      await a.close();
      await b.close();
      removeDir(dir);
    }
  });
});
