// `npm run db:copy`: a populated SQLite installation copied into an empty PostgreSQL database answers the same reads, with
// the same ids, tokens and signed URLs; a target that is not empty is refused and left as it was. The copy needs a
// PostgreSQL server, so it runs in the PostgreSQL pass of `npm test`; the usage errors run in both passes.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { readConfig } from '../src/config.js';
import { version } from '../src/version.js';
import { dropDatabase, ENGINE, freshDatabaseUrl } from './database.js';
import { ADMIN, makeApp, makeTable, tempDir, type TestClient } from './helpers.js';
import { send } from './http.js';
import { COPIED_TABLES, NOT_COPIED, SERVICE_TABLES } from '../src/db/copy-to-postgres.js';
import { ROOT } from './server-process.js';

function dbCopy(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/db-copy.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.stdout.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('db:copy usage', () => {
  it('copies every table of the service but the ones it names as rebuilt or short-lived', () => {
    expect([...COPIED_TABLES, ...NOT_COPIED].sort()).toEqual([...SERVICE_TABLES].sort());
  });

  it('needs --to with a postgres URL (exit 2) and names a missing SQLite database (exit 1)', async () => {
    const none = await dbCopy([], { DATA_DIR: tempDir() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('db:copy needs --to <postgres url>');
    const mysql = await dbCopy(['--to', 'mysql://x@y/z'], { DATA_DIR: tempDir() });
    expect(mysql.code).toBe(2);
    const empty = tempDir();
    const missing = await dbCopy(['--to', 'postgres://nobody@127.0.0.1:1/none'], { DATA_DIR: empty });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`No database at ${path.join(empty, 'table-service.db')}`);
  });
});

describe.runIf(ENGINE === 'postgres')('db:copy from SQLite to PostgreSQL', () => {
  let source: TestClient;
  let target: string;
  let copied: App | undefined;
  const seen: Record<string, unknown> = {};

  const call = (app: App, method: string, url: string, token: string, body?: unknown) =>
    send((r) => app.fetch(r), method, `http://test.local${url}`, { token, body });

  beforeAll(async () => {
    source = await makeApp({ DATABASE_URL: '' });
    expect(source.app.store.engine).toBe('sqlite');
    const other = await makeTable(source, [{ name: 'Name', type: 'text' }]);
    const t = await makeTable(source, [
      { name: 'Name', type: 'text', indexed: true }, { name: 'Count', type: 'number' }, { name: 'Done', type: 'checkbox' },
      { name: 'Tags', type: 'multi_select', options: ['a', 'b', 'c'] }, { name: 'Other', type: 'link', config: { table_id: other } },
      { name: 'No', type: 'autonumber' },
    ]);
    const target1 = (await source.request('POST', `/api/v1/tables/${other}/records`, { body: { fields: { Name: 'linked' } } })).body.data.id;
    const records = Array.from({ length: 1200 }, (_v, i) => ({
      fields: { Name: i === 7 ? 'zephyrine' : `name ${i}`, Count: i, Done: i % 2 === 0, Tags: i % 3 ? ['a'] : ['b', 'c'], Other: i < 3 ? [target1] : [] },
    }));
    for (let i = 0; i < records.length; i += 1000) {
      expect((await source.request('POST', `/api/v1/tables/${t}/records/batch`, { body: { action: 'create', records: records.slice(i, i + 1000) } })).status).toBe(200);
    }
    // Deleting a few leaves holes in the sequence, which the copy must keep.
    const page = (await source.request('GET', `/api/v1/tables/${t}/records?page_size=5`)).body.data.items;
    for (const r of page.slice(0, 2)) await source.request('DELETE', `/api/v1/tables/${t}/records/${r.id}`);
    const apps = await source.request('POST', '/api/oauth/apps', {
      body: { app_name: 'Copied', callback_url: 'https://client.example/cb', scopes: ['base:read', 'record:read'], allowed_bases: [(await source.request('GET', '/api/v1/bases')).body.data.items[0].id] },
    });
    const basic = Buffer.from(`${apps.body.data.client_id}:${apps.body.data.client_secret}`).toString('base64');
    const issue = async () => (await send((r) => source.app.fetch(r), 'POST', 'http://test.local/api/oauth/token', {
      token: null, raw: 'grant_type=client_credentials', headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    })).body.access_token as string;
    const appToken = await issue();
    const revoked = await issue();
    await source.request('POST', `/api/oauth/apps/${apps.body.data.id}/tokens/revoke`, { body: { jti: JSON.parse(Buffer.from(revoked.split('.')[1], 'base64url').toString()).jti } });

    // An attachment: its file moves from DATA_DIR/files into PostgreSQL chunks, and its signed URLs stay valid.
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(await sharp({ create: { width: 400, height: 300, channels: 3, background: '#336699' } }).png().toBuffer())], { type: 'image/png' }), 'copied.png');
    const upload = await source.request('POST', '/api/v1/attachments', { raw: form });
    const files = await makeTable(source, [{ name: 'Files', type: 'attachment' }]);
    const withFile = await source.request('POST', `/api/v1/tables/${files}/records`, { body: { fields: { Files: [upload.body.data.id] } } });
    seen.attachment = { value: withFile.body.data.fields.Files[0], bytes: Buffer.from(await (await source.app.fetch(new Request(withFile.body.data.fields.Files[0].url))).arrayBuffer()) };
    Object.assign(seen, { t, other, appToken, revoked, adminToken: source.adminToken });
    const baseId = apps.body.data.allowed_bases[0];
    // A kept Idempotency-Key answer (SQLite keeps them in a file of their own): its repeat replays after the copy.
    const keyed = { url: `/api/v1/tables/${other}/records`, body: { fields: { Name: 'keyed' } }, key: 'copied-key-1' };
    const keyedFirst = await source.request('POST', keyed.url, { body: keyed.body, headers: { 'idempotency-key': keyed.key } });
    expect(keyedFirst.status).toBe(201);
    seen.keyed = { ...keyed, first: keyedFirst.body };
    // A webhook (disabled: nothing is sent) and the event log move too.
    const hook = await source.request('POST', `/api/v1/bases/${baseId}/webhooks`, { body: { url: 'https://example.com/hook', events: ['*'], enabled: false } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    // [url, token]: the v1 API as the administrator, the Open API (keyword search included) as the application.
    const reads: Array<[string, string]> = [
      `/api/v1/tables/${t}/records?page_size=50&sort=${encodeURIComponent(JSON.stringify([{ field: 'Count', direction: 'desc' }]))}`,
      `/api/v1/tables/${t}/records?filter=${encodeURIComponent(JSON.stringify({ field: 'Name', operator: 'eq', value: 'name 42' }))}`,
      `/api/v1/tables/${t}/fields`, '/api/v1/bases', '/api/v1/tables', `/api/oauth/apps/${apps.body.data.id}/tokens`, '/api/v1/users',
      `/api/v1/bases/${baseId}/webhooks`, `/api/v1/bases/${baseId}/events?limit=1000`,
    ].map((url): [string, string] => [url, source.adminToken]).concat([
      [`/api/open/v1/bases/${baseId}/tables/${t}/records/search?q=zephyrine`, appToken],
      [`/api/open/v1/bases/${baseId}/tables/${t}/records?per_page=100&page=3`, appToken],
    ]);
    seen.reads = reads;
    for (const [url, token] of reads) {
      const res = await call(source.app, 'GET', url, token);
      expect(res.status, url).toBe(200);
      seen[url] = res.body;
    }
    await source.app.close();

    target = (await freshDatabaseUrl())!;
    // The target is a fresh database made from the migrated template: empty of data, which is what db:copy accepts.
    const run = await dbCopy(['--to', target], { DATA_DIR: source.dir });
    expect(run.code, run.stderr).toBe(0);
    seen.stderr = run.stderr;
    // Another data directory: the keys must come from the database now.
    copied = await createApp(readConfig({ DATA_DIR: tempDir(), DATABASE_URL: target, PUBLIC_URL: 'http://test.local', ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password }, version));
  }, 180_000);

  afterAll(async () => {
    await copied?.close();
    await dropDatabase(target);
    fs.rmSync(source.dir, { recursive: true, force: true });
  });

  it('shows its progress and what it copied', () => {
    expect(seen.stderr).toMatch(/100%/);
    expect(seen.stderr).toMatch(/Copied [\d,]+ rows and 3 user tables/);
  });

  it('answers the same reads with the same ids, and tokens made before the copy stay valid', async () => {
    expect(copied!.store.engine).toBe('postgres');
    for (const [url, token] of seen.reads as Array<[string, string]>) {
      const res = await call(copied!, 'GET', url, token);
      expect(res.status, url).toBe(200);
      // Everything but the request's own id.
      expect({ ...res.body, request_id: undefined }, url).toEqual({ ...(seen[url] as object), request_id: undefined });
    }
    const openBase = async (token: string) => (await call(copied!, 'GET', '/api/open/v1/bases', token)).status;
    expect(await openBase(seen.appToken as string)).toBe(200);
    expect(await openBase(seen.revoked as string)).toBe(401);
  });

  it('replays an Idempotency-Key answer kept before the copy', async () => {
    const keyed = seen.keyed as { url: string; body: unknown; key: string; first: any };
    const repeat = await send((r) => copied!.fetch(r), 'POST', `http://test.local${keyed.url}`, { token: seen.adminToken as string, body: keyed.body, headers: { 'idempotency-key': keyed.key } });
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.body.data).toEqual(keyed.first.data);
  });

  it('serves the copied attachment and its thumbnail from PostgreSQL', async () => {
    const { value, bytes } = seen.attachment as { value: any; bytes: Buffer };
    const file = await copied!.fetch(new Request(value.url));
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
    const thumb = await copied!.fetch(new Request(value.thumbnails.small.url));
    expect((await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).width).toBe(200);
  });

  it('goes on numbering records after the copied ones', async () => {
    const created = await call(copied!, 'POST', `/api/v1/tables/${seen.t}/records`, seen.adminToken as string, { fields: { Name: 'after' } });
    expect(created.status).toBe(201);
    expect(created.body.data.fields.No).toBe(1201);
  });

  it('refuses a target that is not empty and leaves it unchanged', async () => {
    const before = (await call(copied!, 'GET', '/api/v1/users', seen.adminToken as string)).body;
    const again = await dbCopy(['--to', target], { DATA_DIR: source.dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('The target database is not empty');
    expect((await call(copied!, 'GET', '/api/v1/users', seen.adminToken as string)).body).toEqual(before);
  });
});
