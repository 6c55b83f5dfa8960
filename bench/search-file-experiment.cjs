// Raw better-sqlite3 experiment for issue 13's growth target: can a trigram search index keep up on a thread of its own
// if it lives in a second file, under that file's own write lock? `node bench/search-file-experiment.cjs MODE [K]`
// writes K thousand records (default 300) in 1,000-row batches into a record table with an index and an event table:
//   none:   no search index (the batches alone);
//   serial: the FTS5 index in the same file, written after each batch by the same connection;
//   split:  the FTS5 index in a second file, written by a worker thread that reads new rows from the first.
// It prints the batches' rate and the rate until the index holds every record (README, Performance).
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const Database = require('better-sqlite3');

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu'.split(' ');
/** The searched text, as the service builds it: the searchable values joined by newlines. */
const TEXT = "coalesce(name,'') || char(10) || coalesce(code,'') || char(10) || coalesce(email,'') || char(10) || coalesce(notes,'')";
const CHUNK = 2000;

function open(file, opts = {}) {
  const db = new Database(file, opts);
  if (!opts.readonly) db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('cache_size = -65536');
  return db;
}

if (!isMainThread) {
  // The indexer: new rows of the record file (read-only), indexed into the search file, CHUNK at a time.
  const records = open(workerData.records, { readonly: true });
  const search = open(workerData.search);
  search.exec("CREATE VIRTUAL TABLE fts USING fts5(text, tokenize = 'trigram')");
  const read = records.prepare(`SELECT _seq, ${TEXT} FROM rt WHERE _seq > ? ORDER BY _seq LIMIT ${CHUNK}`).raw(true);
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
} else {
  const mode = process.argv[2];
  if (!['none', 'serial', 'split'].includes(mode)) throw new Error('usage: node bench/search-file-experiment.cjs none|serial|split [thousands of records]');
  const batches = Number(process.argv[3] ?? 300);
  const dir = fs.mkdtempSync('/tmp/search-file-');
  const db = open(`${dir}/records.db`);
  db.exec(`CREATE TABLE rt (_seq INTEGER PRIMARY KEY, _id TEXT UNIQUE, name TEXT, code TEXT, email TEXT, notes TEXT, amount REAL);
    CREATE INDEX ix_code ON rt (code);
    CREATE TABLE events (seq INTEGER PRIMARY KEY, record_id TEXT, data TEXT);
    CREATE INDEX ix_events_record ON events (record_id);
    CREATE VIRTUAL TABLE fts USING fts5(text, tokenize = 'trigram');`);
  let seed = 1;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const words = (n) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  const insertRecord = db.prepare('INSERT INTO rt (_id, name, code, email, notes, amount) VALUES (?, ?, ?, ?, ?, ?)');
  const insertEvent = db.prepare('INSERT INTO events (record_id, data) VALUES (?, ?)');
  const indexStep = db.prepare(`INSERT INTO fts (rowid, text) SELECT _seq, ${TEXT} FROM rt WHERE _seq > ? AND _seq <= ?`);
  let written = 0;
  let indexed = 0;
  const worker = mode === 'split' ? new Worker(__filename, { workerData: { records: `${dir}/records.db`, search: `${dir}/search.db` } }) : undefined;
  worker?.on('message', (seq) => { indexed = seq; });
  const started = performance.now();
  let n = 0;
  (async () => {
    for (let b = 0; b < batches; b++) {
      const rows = Array.from({ length: 1000 }, () => [
        `rec${Date.now().toString(36)}${(n++).toString(36).padStart(6, '0')}`, `${words(2)} ${Math.floor(random() * 1e5)}`,
        `C${Math.floor(random() * 1000)}`, `${words(1)}.${Math.floor(random() * 1e5)}@example.com`, words(5 + Math.floor(random() * 20)), random() * 1000,
      ]);
      db.transaction(() => {
        for (const r of rows) {
          insertRecord.run(r);
          insertEvent.run(r[0], JSON.stringify({ name: r[1], code: r[2] }));
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
    const rate = (ms) => Math.round(written / ((ms - started) / 1000)).toLocaleString('en-US');
    console.log(`${mode}: ${written.toLocaleString('en-US')} records at ${rate(seeded)}/s; index current after ${((current - started) / 1000).toFixed(1)} s (${rate(current)}/s sustained)`);
    await worker?.terminate();
    db.close();
    fs.rmSync(dir, { recursive: true });
  })();
}
