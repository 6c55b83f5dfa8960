// Measures the cost of signing attachment URLs on list: 100 records with 2 attachments each vs the same without the field.
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { makeApp, makeTable } from '../test/helpers.js';

const c = await makeApp({ DATABASE_URL: '' });
const png = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#888' } }).png().toBuffer();
const ids: string[] = [];
for (let i = 0; i < 2; i++) {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), `p${i}.png`);
  ids.push((await c.request('POST', '/api/v1/attachments', { raw: form })).body.data.id);
}
const fields = [{ name: 'Name', type: 'text' }, { name: 'N', type: 'number' }];
const plain = await makeTable(c, fields);
const withFiles = await makeTable(c, [...fields, { name: 'Files', type: 'attachment' }]);
const rows = (files: boolean) => Array.from({ length: 100 }, (_v, i) => ({ fields: { Name: `r${i}`, N: i, ...(files ? { Files: ids } : {}) } }));
await c.request('POST', `/api/v1/tables/${plain}/records/batch`, { body: { action: 'create', records: rows(false) } });
await c.request('POST', `/api/v1/tables/${withFiles}/records/batch`, { body: { action: 'create', records: rows(true) } });
async function time(table: string) {
  for (let i = 0; i < 50; i++) await c.request('GET', `/api/v1/tables/${table}/records?page_size=100`);
  const n = 300;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await c.request('GET', `/api/v1/tables/${table}/records?page_size=100`);
  return (performance.now() - t0) / n;
}
const a = await time(plain);
const b = await time(withFiles);
const c2 = await time(plain);
console.log(`list of 100 records: without attachments ${((a + c2) / 2).toFixed(2)} ms, with 2 attachments each (600 signed URLs) ${b.toFixed(2)} ms`);
await c.close();
