// `npm run db:copy -- --to <postgres url>`: copies the SQLite installation DATA_DIR names into an empty PostgreSQL
// database, with a progress bar on the terminal (contract section 11). Exit code 1 with one line when it cannot.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, readConfig, withDotEnv } from './config.js';
import { copyToPostgres, CopyError, redact, type CopyProgress } from './db/copy-to-postgres.js';
import { DB_FILE } from './db/sqlite-store.js';

const USAGE = `Usage: npm run db:copy -- --to postgres://user:password@host:5432/database

Copies the SQLite installation in DATA_DIR (default ./data) into an empty PostgreSQL database: users, bases, tables
and records, applications and their tokens, workflows and their runs, plugins, and the signing keys. Then start the
server with DATABASE_URL set to the same URL. A target that is not empty is refused and left unchanged.`;

/** A bar on a terminal, redrawn in place; a line per tenth elsewhere (CI logs). */
function progressPrinter() {
  let lastTenth = -1;
  return (p: CopyProgress) => {
    const share = p.total ? p.done / p.total : 1;
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round(share * width);
      const what = p.what.length > 40 ? `${p.what.slice(0, 39)}…` : p.what;
      process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%  ${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} rows  ${what.padEnd(40)}`);
      if (p.what === 'done') process.stderr.write('\n');
    } else if (Math.floor(share * 10) > lastTenth) {
      lastTenth = Math.floor(share * 10);
      process.stderr.write(`${lastTenth * 10}% (${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} rows)\n`);
    }
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { to: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.to || !/^postgres(ql)?:\/\//.test(values.to)) {
    console.error(`db:copy needs --to <postgres url>\n\n${USAGE}`);
    return 2;
  }
  const config = readConfig(withDotEnv(process.env));
  const sqliteFile = path.join(config.dataDir, DB_FILE);
  console.error(`Copying ${sqliteFile} to ${redact(values.to)}`);
  const started = Date.now();
  const result = await copyToPostgres({ sqliteFile, targetUrl: values.to, onProgress: progressPrinter() });
  console.error(`Copied ${result.rows.toLocaleString('en-US')} rows and ${result.tables} user tables in ${((Date.now() - started) / 1000).toFixed(1)} s.`
    + ` Start the server with DATABASE_URL=${redact(values.to)}`);
  return 0;
}

main().then((code) => process.exit(code), (e: unknown) => {
  if (e instanceof CopyError || e instanceof ConfigError) console.error(`db:copy: ${e.message}`);
  else console.error('db:copy failed:', e);
  process.exit(1);
});
