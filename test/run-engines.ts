// `npm test`: the whole suite on SQLite, then again on PostgreSQL, each test app on a fresh database (contract section 11:
// the same tests pass on both). PostgreSQL comes from TEST_POSTGRES_URL (a server you name, `.../postgres` with the right
// to create databases) or a throwaway cluster started here from Debian's binaries and removed afterwards.
//
//   npm test                         both engines; arguments after `--` go to vitest (e.g. a test file)
//   TEST_ENGINE=sqlite npm test      one engine only (sqlite or postgres)
//   TEST_STRICT=1                    a PostgreSQL that cannot be found or started fails the run instead of skipping it
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';
import { openPgStore } from '../src/db/pg-store.js';
import { findPostgresBin, startCluster, type Cluster } from './postgres-cluster.js';
import { ROOT } from './server-process.js';

const require = createRequire(import.meta.url);
const vitest = path.join(path.dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const args = process.argv.slice(2);
const strict = process.env.TEST_STRICT === '1';
const engines = (process.env.TEST_ENGINE ?? 'sqlite,postgres').split(',').map((s) => s.trim()).filter(Boolean);
const TEMPLATE = 'ts_test_template';

function runVitest(engine: string, env: Record<string, string>): boolean {
  console.log(`\n=== test suite on ${engine} ===\n`);
  const r = spawnSync(process.execPath, [vitest, 'run', ...args], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status === 0;
}

/** A database migrated once, which every test app's database copies. */
async function makeTemplate(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${TEMPLATE}`);
  } finally {
    await admin.end();
  }
  const u = new URL(url);
  u.pathname = `/${TEMPLATE}`;
  const store = await openPgStore(u.toString(), { poolSize: 1 });
  await store.close();
}

async function postgresRun(): Promise<boolean | 'skipped'> {
  let cluster: Cluster | undefined;
  let url = process.env.TEST_POSTGRES_URL;
  if (!url) {
    const bin = findPostgresBin();
    if (!bin) {
      const message = 'no PostgreSQL 15+ server binaries under /usr/lib/postgresql (apt-get install postgresql), and TEST_POSTGRES_URL is not set';
      if (strict) throw new Error(`TEST_STRICT=1: the PostgreSQL run cannot start: ${message}`);
      console.log(`\n=== SKIPPED: the test suite on PostgreSQL: ${message} ===\n`);
      return 'skipped';
    }
    cluster = await startCluster(bin);
    url = cluster.url;
  }
  try {
    await makeTemplate(url);
    return runVitest('PostgreSQL', { TEST_DATABASE_URL: url, TEST_DATABASE_TEMPLATE: TEMPLATE });
  } finally {
    cluster?.stop();
  }
}

let ok = true;
for (const engine of engines) {
  if (engine === 'sqlite') ok = runVitest('SQLite', { TEST_DATABASE_URL: '' }) && ok;
  else if (engine === 'postgres') ok = (await postgresRun()) !== false && ok;
  else throw new Error(`TEST_ENGINE: unknown engine "${engine}" (sqlite or postgres)`);
}
process.exit(ok ? 0 : 1);
