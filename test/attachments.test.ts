// Attachments (contract 16): streamed uploads, record values with signed URLs, thumbnails, 403 on bad signatures, limits.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import sharp from 'sharp';
import { referencedAttachments } from '../src/domain/attachment-values.js';
import { importFile, waitJob } from './import-helpers.js';
import { makeApp, makeTable, type TestClient } from './helpers.js';

let c: TestClient;
beforeAll(async () => {
  c = await makeApp({ ATTACHMENT_MAX_BYTES: String(5 * 1024 * 1024) });
});
afterAll(() => c?.close());

const png = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: '#3366cc' } }).png().toBuffer();
const jpeg = (w: number, h: number) => sharp({ create: { width: w, height: h, channels: 3, background: '#cc6633' } }).jpeg().toBuffer();

async function upload(bytes: Uint8Array | string, name: string, type = 'application/octet-stream', token?: string, headers?: Record<string, string>) {
  const form = new FormData();
  form.set('file', new Blob([bytes as BlobPart], { type }), name);
  return c.request('POST', '/api/v1/attachments', { raw: form, token, headers });
}
/** GET of an absolute signed URL through the app. */
const fetchUrl = (url: string) => c.request('GET', new URL(url).pathname + new URL(url).search, { token: null });

describe('attachments', () => {
  it('uploads a PNG and a JPEG, stores them in a record and serves file and thumbnails with their sizes', async () => {
    const p = await upload(await png(1600, 900), 'wide.png', 'image/png');
    expect(p.status).toBe(201);
    expect(p.body.data).toMatchObject({ name: 'wide.png', mime_type: 'image/png' });
    expect(p.body.data.id).toMatch(/^att/);
    // The bytes decide an image's type, not the client's claim.
    const j = await upload(await jpeg(300, 500), 'tall.bin', 'application/octet-stream');
    expect(j.body.data.mime_type).toBe('image/jpeg');
    const tableId = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Files', type: 'attachment' }]);
    const rec = await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Name: 'a', Files: [{ id: p.body.data.id }, j.body.data.id] } } });
    expect(rec.status).toBe(201);
    const [a, b] = rec.body.data.fields.Files;
    expect(a).toMatchObject({ id: p.body.data.id, name: 'wide.png', size: p.body.data.size, mime_type: 'image/png' });
    expect(a.thumbnails.small).toMatchObject({ width: 200, height: 113 });
    expect(a.thumbnails.large).toMatchObject({ width: 800, height: 450 });
    // Never upscaled: 300x500 fits inside 800 as it is.
    expect(b.thumbnails.small).toMatchObject({ width: 120, height: 200 });
    expect(b.thumbnails.large).toMatchObject({ width: 300, height: 500 });
    const file = await c.app.fetch(new Request(a.url));
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('content-disposition')).toBe(`inline; filename="wide.png"; filename*=UTF-8''wide.png`);
    expect(Number(file.headers.get('content-length'))).toBe(p.body.data.size);
    expect(Buffer.from(await file.arrayBuffer()).equals(await png(1600, 900))).toBe(true);
    const thumb = await c.app.fetch(new Request(b.thumbnails.small.url));
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect([meta.width, meta.height]).toEqual([120, 200]);
    // A read lists the same value; the list carries it too.
    const list = await c.request('GET', `/api/v1/tables/${tableId}/records`);
    expect(list.body.data.items[0].fields.Files.map((x: any) => x.id)).toEqual([a.id, b.id]);
  });

  it('serves a file that is not an image as a download, with a non-ASCII name', async () => {
    const up = await upload('hello, world\n', 'Résumé été.txt', 'text/plain');
    expect(up.body.data).toMatchObject({ mime_type: 'text/plain', size: 13 });
    const tableId = await makeTable(c, [{ name: 'Files', type: 'attachment' }]);
    const rec = await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Files: [up.body.data.id] } } });
    const [v] = rec.body.data.fields.Files;
    expect(v.thumbnails).toBeNull();
    const res = await fetchUrl(v.url);
    expect(res.status).toBe(200);
    expect(res.text).toBe('hello, world\n');
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="R_sum_ _t_.txt"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%C3%A9t%C3%A9.txt`);
  });

  it('answers 403 for a tampered or expired signature', async () => {
    const up = await upload('secret', 's.txt', 'text/plain');
    const tableId = await makeTable(c, [{ name: 'Files', type: 'attachment' }]);
    const [v] = (await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Files: [up.body.data.id] } } })).body.data.fields.Files;
    const url = new URL(v.url);
    const sig = url.searchParams.get('sig')!;
    url.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    const tampered = await fetchUrl(url.toString());
    expect(tampered.status).toBe(403);
    expect(tampered.body).toMatchObject({ code: 403, error: 'FORBIDDEN', data: null });
    const later = new URL(v.url);
    later.searchParams.set('exp', String(Number(later.searchParams.get('exp')) + 3600));
    expect((await fetchUrl(later.toString())).status).toBe(403);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 2 * 3600_000);
      expect((await fetchUrl(v.url)).status).toBe(403);
    } finally {
      vi.useRealTimers();
    }
    expect((await fetchUrl(v.url)).status).toBe(200);
  });

  it('refuses files over ATTACHMENT_MAX_BYTES (413), unknown ids and other users\' uploads (400), anonymous uploads (401)', async () => {
    const big = await upload(new Uint8Array(5 * 1024 * 1024 + 1), 'big.bin');
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('PAYLOAD_TOO_LARGE');
    expect((await upload('x', 'x.txt', 'text/plain', '')).status).toBe(401);
    const tableId = await makeTable(c, [{ name: 'Files', type: 'attachment' }]);
    const missing = await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Files: ['att0000000000000000'] } } });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0]).toMatchObject({ field: 'Files' });
    const other = await c.user('uploader');
    const theirs = await upload('theirs', 't.txt', 'text/plain', other.token);
    expect(theirs.status).toBe(201);
    const taken = await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Files: [theirs.body.data.id] } } });
    expect(taken.status).toBe(400);
    expect(taken.body.msg).toMatch(/someone else/);
    const bad = await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Files: 'nope' } } });
    expect(bad.status).toBe(400);
  });

  it('keeps an upload\'s answer for its Idempotency-Key: a retry gets the same file, other bytes under the key a 422', async () => {
    const key = { 'idempotency-key': `upload-${Date.now()}` };
    const first = await upload('same bytes', 'a.txt', 'text/plain', undefined, key);
    expect(first.status).toBe(201);
    const again = await upload('same bytes', 'a.txt', 'text/plain', undefined, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
    const other = await upload('other bytes', 'a.txt', 'text/plain', undefined, key);
    expect(other.status).toBe(422);
    // Only the first stored a file: the replay and the refusal left nothing behind in the spool.
    const rows = await c.app.services.deps.store.db.select().from(c.app.services.deps.store.schema.attachments);
    expect(rows.filter((r) => r.name === 'a.txt')).toHaveLength(1);
    const fs = await import('node:fs');
    expect(fs.readdirSync(c.app.services.attachments.incomingDir)).toEqual([]);
  });

  it('sweeps files older than an hour that no record holds, and keeps the ones records or the trash hold', async () => {
    const kept = (await upload('kept', 'kept.txt', 'text/plain')).body.data.id;
    const loose = (await upload('loose', 'loose.txt', 'text/plain')).body.data.id;
    const dropped = (await upload('dropped', 'dropped.txt', 'text/plain')).body.data.id;
    const tableId = await makeTable(c, [{ name: 'Files', type: 'attachment' }]);
    const made = await c.request('POST', `/api/v1/tables/${tableId}/records/batch`, { body: { action: 'create', records: [{ fields: { Files: [kept] } }, { fields: { Files: [dropped] } }] } });
    const [holdsKept, holdsDropped] = made.body.data.items;
    const url = holdsKept.fields.Files[0].url;
    await c.request('DELETE', `/api/v1/tables/${tableId}/records/${holdsDropped.id}`);
    const { services, store } = c.app;
    const sweep = (nowMs: number) => services.attachments.sweep((ids) => referencedAttachments(store, services.fields.loadFields, ids), nowMs);
    await sweep(Date.now()); // nothing is an hour old yet
    expect(await services.attachments.load(loose)).toBeDefined();
    await sweep(Date.now() + 2 * 3600_000);
    expect(await services.attachments.load(loose)).toBeUndefined();
    // The deleted record waits in the trash (contract section 16), so its file stays until the entry is purged.
    expect(await services.attachments.load(dropped)).toBeDefined();
    const baseId = (await c.request('GET', `/api/v1/tables/${tableId}`)).body.data.base_id;
    const entry = (await c.request('GET', `/api/v1/bases/${baseId}/trash`)).body.data.find((e: any) => e.table_id === tableId && e.type === 'record');
    expect((await c.request('DELETE', `/api/v1/trash/${entry.id}`)).status).toBeLessThan(300);
    await sweep(Date.now() + 2 * 3600_000);
    expect(await services.attachments.load(dropped)).toBeUndefined();
    expect(await services.attachments.load(kept)).toBeDefined();
    expect((await fetchUrl(url)).text).toBe('kept');
  });

  it('exports files as "name (url)" and skips attachment columns on import', async () => {
    const up = await upload('data', 'a.txt', 'text/plain');
    const tableId = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Files', type: 'attachment' }]);
    await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Name: 'x', Files: [up.body.data.id] } } });
    const csv = await c.request('GET', `/api/v1/tables/${tableId}/export?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.text).toMatch(new RegExp(`^Name,Files\\r\\nx,a\\.txt \\(http://test\\.local/api/v1/attachments/${up.body.data.id}/content\\?exp=\\d+&sig=[\\w-]+\\)\\r\\n$`));
    const job = await waitJob(c, (await importFile(c, `/api/v1/tables/${tableId}/import`, csv.text, 'back.csv')).body.data.job_id);
    expect(job).toMatchObject({ status: 'succeeded', imported: 1, failed: 0 });
    const list = await c.request('GET', `/api/v1/tables/${tableId}/records`);
    expect(list.body.data.items.map((r: any) => [r.fields.Name, r.fields.Files?.length ?? null])).toEqual([['x', 1], ['x', null]]);
  });

  it('lets another editor keep a file a record already holds and add their own, in an update', async () => {
    const mine = (await upload('mine', 'mine.txt', 'text/plain')).body.data.id;
    const editor = await c.user('editor');
    const baseId = (await c.request('GET', '/api/v1/bases')).body.data.items[0].id;
    expect((await c.request('PUT', `/api/v1/bases/${baseId}/members/${editor.id}`, { body: { role: 'editor' } })).status).toBe(200);
    const tableId = await makeTable(c, [{ name: 'Files', type: 'attachment' }], { baseId });
    const rec = (await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { Files: [mine] } } })).body.data;
    const theirs = (await upload('theirs', 'theirs.txt', 'text/plain', editor.token)).body.data.id;
    const kept = await c.request('PUT', `/api/v1/tables/${tableId}/records/${rec.id}`, { token: editor.token, body: { fields: { Files: [{ id: mine }, theirs] } } });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body.data.fields.Files.map((f: any) => f.name)).toEqual(['mine.txt', 'theirs.txt']);
    // But not into a new record: there the file is not theirs.
    const copy = await c.request('POST', `/api/v1/tables/${tableId}/records`, { token: editor.token, body: { fields: { Files: [mine] } } });
    expect(copy.status).toBe(400);
  });

  it('recognises WebP and GIF by their bytes and makes their thumbnails', async () => {
    for (const [format, mime] of [['webp', 'image/webp'], ['gif', 'image/gif']] as const) {
      const bytes = await sharp({ create: { width: 500, height: 250, channels: 3, background: '#123456' } }).toFormat(format).toBuffer();
      const up = await upload(bytes, `x.${format}`, 'application/octet-stream');
      expect(up.body.data.mime_type).toBe(mime);
      const tableId = await makeTable(c, [{ name: 'F', type: 'attachment' }]);
      const [v] = (await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields: { F: [up.body.data.id] } } })).body.data.fields.F;
      expect(v.thumbnails.small).toMatchObject({ width: 200, height: 100 });
      expect(v.thumbnails.large).toMatchObject({ width: 500, height: 250 });
    }
  });
});
