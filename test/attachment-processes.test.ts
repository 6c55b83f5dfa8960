// Attachments through real server processes: a 200 MB upload streamed with little memory, and on PostgreSQL a file
// uploaded to one process served by another (contract 16: every process serves every file).
import http from 'node:http';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE, freshDatabaseUrl } from './database.js';
import { api, login, removeDir, startServer, stopAllServers, tempDir, type ServerProcess } from './server-process.js';

const MB = 1024 * 1024;
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** Streams a multipart body of `size` bytes (a repeating 1 MiB pattern) to `url`; resolves with the answer and the bytes' sha256. */
function streamUpload(url: string, token: string, size: number): Promise<{ status: number; body: any; sha256: string }> {
  const boundary = 'xattachmentboundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const block = Buffer.alloc(MB);
  for (let i = 0; i < MB; i++) block[i] = (i * 31) & 0xff;
  const hash = createHash('sha256');
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), sha256: hash.digest('hex') }));
    });
    req.on('error', reject);
    let sent = 0;
    const write = () => {
      req.write(head);
      const next = (): void => {
        while (sent < size) {
          const part = block.subarray(0, Math.min(MB, size - sent));
          sent += part.length;
          hash.update(part);
          if (!req.write(part)) return void req.once('drain', next);
        }
        req.end(tail);
      };
      next();
    };
    write();
  });
}

describe('attachments in server processes', () => {
  let databaseUrl: string | undefined;
  const servers: ServerProcess[] = [];
  const dirs: string[] = [];
  async function start() {
    const dataDir = tempDir('ts-att-');
    dirs.push(dataDir);
    const s = await startServer({ dataDir, env: { ATTACHMENT_MAX_BYTES: String(300 * MB), PUBLIC_URL: 'http://files.test', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) } });
    servers.push(s);
    return s;
  }
  beforeAll(async () => {
    databaseUrl = ENGINE === 'postgres' ? await freshDatabaseUrl() : undefined;
  });
  afterAll(async () => {
    await stopAllServers();
    dirs.forEach(removeDir);
  });

  it('takes a 200 MB upload with the server\'s memory growing by far less than 200 MB, and serves it back', async () => {
    const a = await start();
    const token = await login(a.url);
    const pid = a.process.pid!;
    const before = rssOf(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 50);
    let up;
    try {
      up = await streamUpload(`${a.url}/api/v1/attachments`, token, 200 * MB);
    } finally {
      clearInterval(sampler);
    }
    expect(up.status).toBe(201);
    expect(up.body.data.size).toBe(200 * MB);
    console.log(`200 MB upload (${ENGINE}): RSS ${Math.round(before / MB)} MB before, peak ${Math.round(peak / MB)} MB (+${Math.round((peak - before) / MB)} MB)`);
    // A file held whole would add at least its 200 MB. What a streamed one adds is dead 1 MiB buffers that V8 collects
    // only once about 64 MB of them have piled up: measured +33 MB on SQLite, +65-73 MB on PostgreSQL (whose chunk
    // inserts copy each MiB once more), and +98 MB once in CI when a collection came late.
    expect(peak - before).toBeLessThan(128 * MB);
    const t = await api(a.url, 'POST', '/api/v1/tables', { token, body: { name: 'Big', fields: [{ name: 'F', type: 'attachment' }] } });
    const rec = await api(a.url, 'POST', `/api/v1/tables/${t.body.data.id}/records`, { token, body: { fields: { F: [up.body.data.id] } } });
    const url = new URL(rec.body.data.fields.F[0].url);
    // The download streams too: count and hash the bytes as they come.
    const res = await fetch(`${a.url}${url.pathname}${url.search}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(200 * MB));
    const hash = createHash('sha256');
    let got = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      got += chunk.length;
      hash.update(chunk);
    }
    expect(got).toBe(200 * MB);
    expect(hash.digest('hex')).toBe(up.sha256);
  }, 240_000);

  it.runIf(ENGINE === 'postgres')('serves a file uploaded to one process from another process', async () => {
    const a = servers[0] ?? (await start());
    const b = await start();
    const token = await login(a.url);
    const form = new FormData();
    form.set('file', new Blob(['shared bytes']), 'shared.txt');
    const up = await api(a.url, 'POST', '/api/v1/attachments', { token, raw: form });
    const t = await api(a.url, 'POST', '/api/v1/tables', { token, body: { name: 'Shared', fields: [{ name: 'F', type: 'attachment' }] } });
    const rec = await api(a.url, 'POST', `/api/v1/tables/${t.body.data.id}/records`, { token, body: { fields: { F: [up.body.data.id] } } });
    const url = new URL(rec.body.data.fields.F[0].url);
    const res = await fetch(`${b.url}${url.pathname}${url.search}`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('shared bytes');
    // Process b reads the record and signs with the same key (kept in the database).
    const viaB = await api(b.url, 'GET', `/api/v1/tables/${t.body.data.id}/records`, { token });
    const again = new URL(viaB.body.data.items[0].fields.F[0].url);
    expect((await fetch(`${a.url}${again.pathname}${again.search}`)).status).toBe(200);
  }, 60_000);
});
