// Issue 17 workloads (contract section 15): I1 imports a generated 1,000,000-row × 20-column CSV (about 200 MB) into
// a table while one client keeps listing it (the import's time, the server's RSS growth, the list's p95); X1 exports
// those records as CSV (time and RSS growth while the file streams out).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { log } from './harness.js';
import { send, sendJson, summarize, type Target } from './http-load.js';
import { fmt, type Row } from './report.js';
import { SCALE } from './settings.js';

export interface ImportExportCtx {
  svc: Target;
  svcUrl: string;
  token: string;
  servicePid: number;
  tmp: string;
  rows: Row[];
  problems: string[];
  settle(): Promise<unknown>;
}

const ROWS = Math.max(10_000, Math.round(1_000_000 * SCALE));
const STATUSES = ['todo', 'doing', 'done', 'blocked', 'later'];
const FIELDS = [
  { name: 'Name', type: 'text' }, { name: 'Code', type: 'text' }, { name: 'Amount', type: 'number' }, { name: 'Qty', type: 'number' },
  { name: 'Score', type: 'number' }, { name: 'Done', type: 'checkbox' }, { name: 'Day', type: 'date' },
  { name: 'Status', type: 'single_select', options: STATUSES }, { name: 'Email', type: 'email' }, { name: 'Site', type: 'url' },
  { name: 'Note', type: 'text' }, { name: 'City', type: 'text' }, { name: 'Ref', type: 'text' }, { name: 'Price', type: 'number' },
  { name: 'Weight', type: 'number' }, { name: 'Rank', type: 'number' }, { name: 'Phone', type: 'phone' }, { name: 'Tag', type: 'text' },
  { name: 'Extra', type: 'long_text' }, { name: 'Flag', type: 'checkbox' },
];

/** The server's resident memory in bytes (Linux /proc). */
function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Samples the server's RSS every 100 ms until stopped; returns the highest. */
function rssPeak(pid: number) {
  let peak = rss(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rss(pid))), 100);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rss(pid));
  };
}

/** Writes the CSV with a seeded generator (the same file every run). */
async function generate(file: string, rows: number) {
  let s = 17;
  const rand = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const out = fs.createWriteStream(file);
  out.write(`${FIELDS.map((f) => f.name).join(',')}\n`);
  let buf = '';
  for (let i = 0; i < rows; i++) {
    const n = Math.floor(rand() * 1e6);
    buf += `person ${i},C${n % 99991},${(n / 100).toFixed(2)},${n % 500},${(rand() * 100).toFixed(3)},${n % 2 ? 'true' : 'false'},`
      + `2024-${String(1 + (n % 12)).padStart(2, '0')}-${String(1 + (n % 28)).padStart(2, '0')},${STATUSES[n % 5]},user${n}@example.org,`
      + `https://example.org/p/${n},"note ${n}, with a comma",City ${n % 997},R-${i},${(n % 10000) / 10},${n % 97},${n % 1000},`
      + `+33 1 ${String(n).padStart(8, '0')},tag${n % 50},"extra text ${n} ${i}",${n % 3 === 0 ? 'yes' : 'no'}\n`;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  out.write(buf);
  await new Promise<void>((r) => out.end(() => r()));
}

/** Streams the file as a multipart upload; resolves with the answer's JSON. */
function upload(ctx: ImportExportCtx, urlPath: string, file: string): Promise<any> {
  const boundary = `bench${Date.now()}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  return new Promise((resolve, reject) => {
    const req = http.request(`${ctx.svcUrl}${urlPath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': Buffer.byteLength(head) + fs.statSync(file).size + Buffer.byteLength(tail) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
    req.on('error', reject);
    req.write(head);
    const input = fs.createReadStream(file);
    input.pipe(req, { end: false });
    input.on('end', () => req.end(tail));
  });
}

export async function importExport(ctx: ImportExportCtx, only: Set<string>) {
  const file = path.join(ctx.tmp, 'bench-import.csv');
  log(`I1. generating a ${ROWS.toLocaleString('en-US')}-row × ${FIELDS.length}-column CSV…`);
  await generate(file, ROWS);
  const mb = fs.statSync(file).size / 1e6;
  const table = (await sendJson(ctx.svc, { method: 'POST', path: '/api/v1/tables', body: JSON.stringify({ name: `bench_import_${Date.now()}`, fields: FIELDS }) })).data.id as string;
  await ctx.settle();
  log(`I1. importing ${fmt(mb)} MB while one client lists the table…`);
  const before = rss(ctx.servicePid);
  const peak = rssPeak(ctx.servicePid);
  const started = performance.now();
  const answer = await upload(ctx, `/api/v1/tables/${table}/import`, file);
  if (!answer.data?.job_id) throw new Error(`import refused: ${JSON.stringify(answer).slice(0, 300)}`);
  const uploaded = (performance.now() - started) / 1000;
  let done = false;
  const latencies: number[] = [];
  const lister = (async () => {
    while (!done) {
      const t = performance.now();
      const res = await send(ctx.svc, { method: 'GET', path: `/api/v1/tables/${table}/records?page=1&page_size=100` });
      if (res.status !== 200) ctx.problems.push(`I1: a list during the import answered ${res.status}`);
      latencies.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  let job: any;
  for (;;) {
    job = (await sendJson(ctx.svc, { method: 'GET', path: `/api/v1/jobs/${answer.data.job_id}` })).data;
    if (!['queued', 'running'].includes(job.status)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = (performance.now() - started) / 1000;
  done = true;
  await lister;
  const growth = peak() - before;
  const list = summarize(latencies, seconds, 0);
  if (job.status !== 'succeeded' || job.imported !== ROWS) ctx.problems.push(`I1: the job ended ${job.status} with ${job.imported} of ${ROWS} rows (${job.error ?? ''}; ${JSON.stringify(job.errors?.slice(0, 2))})`);
  log(`   ${fmt(seconds)} s (upload ${fmt(uploaded)} s), ${fmt(ROWS / seconds)} rows/s, RSS +${fmt(growth / 1e6)} MB, list p95 ${fmt(list.p95)} ms over ${list.requests} requests`);
  const limit = 60 * Math.max(SCALE, 0.01);
  ctx.rows.push(
    { id: 'I1', workload: `import ${ROWS.toLocaleString('en-US')} × ${FIELDS.length} CSV (${fmt(mb)} MB)`, unit: 's', service: seconds, baseline: null, ratio: null, target: `<= ${fmt(limit)} s`, pass: seconds <= limit, details: { job, uploaded } },
    { id: 'I1m', workload: 'server RSS growth during the import', unit: 'MB', service: growth / 1e6, baseline: null, ratio: null, target: '<= 512 MB', pass: growth <= 512e6 },
    { id: 'I1l', workload: 'list page p95 during the import', unit: 'ms p95', service: list.p95, baseline: null, ratio: null, target: '<= 200 ms', pass: list.p95 <= 200, details: { ...list } },
  );
  fs.rmSync(file, { force: true });
  if (!only.has('X1')) return;

  await ctx.settle();
  log(`X1. exporting ${ROWS.toLocaleString('en-US')} records as CSV…`);
  const xBefore = rss(ctx.servicePid);
  const xPeak = rssPeak(ctx.servicePid);
  const xStarted = performance.now();
  const { bytes, lines } = await new Promise<{ bytes: number; lines: number }>((resolve, reject) => {
    http.get(`${ctx.svcUrl}/api/v1/tables/${table}/export`, { headers: { authorization: `Bearer ${ctx.token}` } }, (res) => {
      let b = 0;
      let l = 0;
      res.on('data', (c: Buffer) => {
        b += c.length;
        for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) l++;
      });
      res.on('end', () => resolve({ bytes: b, lines: l }));
      res.on('error', reject);
    }).on('error', reject);
  });
  const xSeconds = (performance.now() - xStarted) / 1000;
  const xGrowth = xPeak() - xBefore;
  if (lines < ROWS + 1) ctx.problems.push(`X1: the export held ${lines} lines for ${ROWS} records`);
  log(`   ${fmt(xSeconds)} s, ${fmt(bytes / 1e6)} MB, RSS +${fmt(xGrowth / 1e6)} MB`);
  const xLimit = 30 * Math.max(SCALE, 0.01);
  ctx.rows.push(
    { id: 'X1', workload: `export ${ROWS.toLocaleString('en-US')} records as CSV (${fmt(bytes / 1e6)} MB)`, unit: 's', service: xSeconds, baseline: null, ratio: null, target: `<= ${fmt(xLimit)} s`, pass: xSeconds <= xLimit },
    { id: 'X1m', workload: 'server RSS growth during the export', unit: 'MB', service: xGrowth / 1e6, baseline: null, ratio: null, target: '<= 100 MB', pass: xGrowth <= 100e6 },
  );
}
