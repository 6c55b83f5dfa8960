// Raw better-sqlite3 experiment for issue 13's growth target: can a trigram search index keep up on a thread of its own
// if it lives in a second file, under that file's own write lock? `npx tsx bench/search-file-experiment.ts MODE [K]`
// writes K thousand of the bench's records (default 300) in 1,000-row batches into a record table with an index and an
// event table:
//   none:   no search index (the batches alone);
//   serial: the FTS5 index in the same file, written after each batch by the same connection;
//   split:  the FTS5 index in a second file, written by a worker thread that reads new rows from the first.
// It prints the batches' rate and the rate until the index holds every record (README, Performance).
import Database from 'better-sqlite3';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { prng, record } from './data.js';

/** The searched text, as the service builds it: the searchable values (text, email, single select) joined by newlines. */
const TEXT = ['name', 'code', 'region', 'status', 'email', 'notes'].map((c) => `coalesce(${c}, '')`).join(' || char(10) || ');
const CHUNK = 2000;

// The indexer, plain CommonJS run with `eval` (a worker cannot load this TypeScript file): new rows of the record file
// (read-only), indexed into the search file, CHUNK at a time; it posts the last `_seq` it indexed.
const INDEXER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const records = new Database(workerData.records, { readonly: true });
const search = new Database(workerData.search);
search.pragma('journal_mode = WAL');
search.pragma('synchronous = NORMAL');
search.exec("CREATE VIRTUAL TABLE fts USING fts5(text, tokenize = 'trigram')");
const read = records.prepare(workerData.read).raw(true);
const insert = search.prepare('INSERT INTO fts (rowid, text) VALUES (?, ?)');
let indexed = 0;
const step = () => {
  const rows = read.all(indexed);
  if (rows.length) {
    search.transaction(() => { for (const r of rows) insert.run(r[0], r[1]); })();
    indexed = rows[rows.length - 1][0];
    parentPort.postMessage(indexed);
  }
  setTimeout(step, rows.length ? 0 : 5);
};
step();
`;

const mode = process.argv[2];
if (mode !== 'none' && mode !== 'serial' && mode !== 'split') throw new Error('usage: npx tsx bench/search-file-experiment.ts none|serial|split [thousands of records]');
const batches = Number(process.argv[3] ?? 300);
const dir = fs.mkdtempSync('/tmp/search-file-');
const db = new Database(`${dir}/records.db`);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('cache_size = -65536');
db.exec(`CREATE TABLE rt (_seq INTEGER PRIMARY KEY, _id TEXT UNIQUE, name TEXT, code TEXT, region TEXT, status TEXT, email TEXT, notes TEXT, amount REAL);
  CREATE INDEX ix_code ON rt (code);
  CREATE TABLE events (seq INTEGER PRIMARY KEY, record_id TEXT, data TEXT);
  CREATE INDEX ix_events_record ON events (record_id);
  CREATE VIRTUAL TABLE fts USING fts5(text, tokenize = 'trigram');`);
const insertRecord = db.prepare('INSERT INTO rt (_id, name, code, region, status, email, notes, amount) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
const insertEvent = db.prepare('INSERT INTO events (record_id, data) VALUES (?, ?)');
const indexStep = db.prepare(`INSERT INTO fts (rowid, text) SELECT _seq, ${TEXT} FROM rt WHERE _seq > ? AND _seq <= ?`);
let written = 0;
let indexed = 0;
const worker = mode === 'split'
  ? new Worker(INDEXER, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'), records: `${dir}/records.db`, search: `${dir}/search.db`,
      read: `SELECT _seq, ${TEXT} FROM rt WHERE _seq > ? ORDER BY _seq LIMIT ${CHUNK}`,
    },
  })
  : undefined;
worker?.on('message', (seq: number) => { indexed = seq; });
const r = prng(9);
const started = performance.now();
let n = 0;
for (let b = 0; b < batches; b++) {
  const rows = Array.from({ length: 1000 }, () => {
    const v = record(r) as Record<string, string | number | null>;
    return [`rec${Date.now().toString(36)}${(n++).toString(36).padStart(6, '0')}`, v.name, v.code, v.region, v.status, v.email, v.notes, v.amount];
  });
  db.transaction(() => {
    for (const row of rows) {
      insertRecord.run(row);
      insertEvent.run(row[0], JSON.stringify({ name: row[1], code: row[2] }));
    }
  })();
  written += 1000;
  if (mode === 'serial') db.transaction(() => indexStep.run(written - 1000, written))();
  if (mode !== 'split') indexed = written;
  await new Promise((resolve) => setImmediate(resolve)); // the worker's messages arrive between batches
}
const seeded = performance.now();
while (indexed < written) await new Promise((resolve) => setTimeout(resolve, 5));
const current = performance.now();
const rate = (ms: number) => Math.round(written / ((ms - started) / 1000)).toLocaleString('en-US');
console.log(`${mode}: ${written.toLocaleString('en-US')} records at ${rate(seeded)}/s; index current after ${((current - started) / 1000).toFixed(1)} s (${rate(current)}/s sustained)`);
await worker?.terminate();
db.close();
fs.rmSync(dir, { recursive: true });
