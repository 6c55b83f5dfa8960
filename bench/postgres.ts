// `npm run bench`'s PostgreSQL part (workloads PG1-PG4 and PGW, bench/pg-workloads.ts): the service on PostgreSQL
// (DATABASE_URL) against bench/pg-baseline-server.ts (node:http + pg running the same SQL) in the same run.
// The server is BENCH_POSTGRES_URL, or else a throwaway cluster (test/postgres-cluster.ts: fsync off) when PostgreSQL's
// binaries are installed; either way the bench works in a database of its own, dropped at the end.
// Seeding: the list table wholly through the batch endpoint (PG4); the 1M-record table through it up to
// BENCH_PG_API_SEED records (default 200,000 at scale 1), the rest in SQL straight into the service's record table,
// after which the service is restarted so its search indexer (which catches every table up at start) indexes them;
// the reads are measured once the index has caught up and both tables had a VACUUM ANALYZE (what autovacuum would do
// in its own time, done up front so it does not run during the measurements).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { findPostgresBin, startCluster } from '../test/postgres-cluster.js';
import { createTableIn, log, timed } from './harness.js';
import { makeTarget, sendJson, treeMeter, type Target } from './http-load.js';
import { bigSeedRows, pgBatchRows, pgDoors, pgFilter, pgList, pgSearch, scaleOut, type PgCtx } from './pg-workloads.js';
import { postgresCpuMeter } from './pg-sql.js';
import { seedPg, waitSearchCaughtUp, type SeedResult } from './pg-seed.js';
import { idleUse, start, stop, waitHealthy, waitIdle, waitLogged, type Child } from './procs.js';
import { fmt, type Row } from './report.js';
import {
  ADMIN, BIG_RECORDS, CONNECTIONS, ENGINES, KEEP, LIST_RECORDS, ONLY, PG_WORKLOADS, PROFILE, ROOT, SCALE, SEED_BIG, SEED_LIST, SERVICE_DIR, SERVICE_NODE_FLAGS,
} from './settings.js';

/** Records of the 1M-record table written through the API; the rest go in by SQL (see the header). */
const API_SEED_LIMIT = Number(process.env.BENCH_PG_API_SEED ?? 0) || Math.max(10_000, Math.round(200_000 * SCALE));

export interface PgPart {
  tmp: string;
  rows: Row[];
  problems: string[];
  /** Where the service's CPU profiles go (BENCH_PROFILE), for the summary at the end. */
  profileDirs: string[];
}

export interface PgService {
  child: Child;
  /** The service with the administrator's bearer token; server CPU counts every process of it (node:cluster workers). */
  t: Target;
  url: string;
  /** Waits until the service stops using the CPU on its own. */
  settle(): Promise<number>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The PostgreSQL server to use, or null (with the reason) when there is none. */
async function pgServer(): Promise<{ url: string; label: string; stop(): void } | { reason: string }> {
  if (process.env.BENCH_POSTGRES_URL) return { url: process.env.BENCH_POSTGRES_URL, label: 'BENCH_POSTGRES_URL', stop() {} };
  const bin = findPostgresBin();
  if (!bin) return { reason: 'no PostgreSQL 15+ binaries under /usr/lib/postgresql and no BENCH_POSTGRES_URL' };
  log(`starting a throwaway PostgreSQL cluster (${bin})…`);
  const cluster = await startCluster(bin);
  // pg_ctl runs the server detached: stop it on every way out (Ctrl-C, a crash), not only at the end of the part.
  let stopped = false;
  const stopOnce = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stopOnce);
    cluster.stop();
  };
  process.on('exit', stopOnce);
  return { url: cluster.url, label: `throwaway cluster from ${bin} (fsync off, synchronous_commit off)`, stop: stopOnce };
}

async function adminQuery(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function runPostgres(part: PgPart): Promise<void> {
  const has = (w: string) => ONLY.has(w);
  if (!PG_WORKLOADS.some(has)) return;
  const server = await pgServer();
  if ('reason' in server) {
    log(`\nPostgreSQL part skipped: ${server.reason}`);
    if (process.env.BENCH_ENGINE === 'postgres') part.problems.push(`PostgreSQL part could not run: ${server.reason}`);
    return;
  }
  const dbName = `table_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = withDatabase(server.url, dbName);
  let db: pg.Pool | undefined;
  let service: PgService | undefined;
  let baseline: Child | undefined;
  try {
    await adminQuery(server.url, `CREATE DATABASE "${dbName}"`);
    db = new pg.Pool({ connectionString: url, max: 3 });
    const version = (await db.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
    const dbCpu = await postgresCpuMeter(db);
    log(`\nPostgreSQL part: PostgreSQL ${version}, ${server.label}, database ${dbName}${dbCpu ? '' : ' (its CPU cannot be measured from here)'}`);
    const pgDataDir = path.join(part.tmp, 'pg-data');
    fs.mkdirSync(pgDataDir, { recursive: true });
    let starts = 0;
    const startService = async (workers: number, profile = false): Promise<PgService> => {
      const profileDir = path.join(part.tmp, 'pg-profile');
      if (profile && !part.profileDirs.includes(profileDir)) part.profileDirs.push(profileDir);
      const child = await start(`pg-service-${++starts}-w${workers}`, {
        cwd: SERVICE_DIR, script: 'src/main.ts', logDir: part.tmp,
        env: { DATA_DIR: pgDataDir, DATABASE_URL: url, WORKERS: String(workers), ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password },
        nodeArgs: [...SERVICE_NODE_FLAGS, ...(profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])],
      });
      await waitHealthy(child);
      // Every worker must listen before the load's connections are opened, or the first ones get them all.
      await waitLogged(child, /"msg":"listening"/, workers);
      const idleCores = profile ? 0.05 + 1.5 * (await idleUse(child)) : 0.05;
      const base = `http://127.0.0.1:${child.port}`;
      const login = await sendJson(makeTarget('service', base), { method: 'POST', path: '/api/auth/login', body: JSON.stringify(ADMIN) });
      const t: Target = { ...makeTarget('pg service', base, { authorization: `Bearer ${login.data.token}` }, CONNECTIONS, child.proc.pid), serverCpu: treeMeter(child.proc.pid!), dbCpu };
      return { child, t, url: base, settle: () => waitIdle(child, { idleCores }) };
    };
    const restart = async (workers: number, profile = false) => {
      if (service) await stop(service.child);
      service = await startService(workers, profile);
      return service;
    };

    await restart(1, PROFILE);
    const needList = ['PG1', 'PG4', 'PG5', 'PGT2', 'PGW'].some(has);
    const needBig = ['PG2', 'PG3'].some(has);
    let listTable = '';
    let bigTable = '';
    let bigBase = '';
    let listBase = '';
    let seedList: SeedResult | undefined;
    let seedBig: SeedResult | undefined;
    let listBusy = 0;
    let bigIndexSeconds = 0;
    if (needList) {
      ({ id: listTable, baseId: listBase } = await createTableIn(service!.t, 'bench_list'));
      log(`PG: seeding ${LIST_RECORDS.toLocaleString('en-US')} records into the list table through the batch endpoint…`);
      seedList = await timed('PG4. batch create (seeding the list table)', () => seedPg(service!.t, db!, listTable, LIST_RECORDS, SEED_LIST, LIST_RECORDS, 'PG list table'));
      listBusy = await timed('PG4. background work after seeding the list table', async () => {
        const from = performance.now();
        await waitSearchCaughtUp(db!, listTable, 'PG list table');
        await service!.settle();
        return (performance.now() - from) / 1000;
      });
      log(`  ${fmt(seedList.api.recordsPerSecond)} records/s (batch p50 ${fmt(seedList.api.stats.p50)} ms); search index caught up ${listBusy.toFixed(1)} s later`);
    }
    if (needBig) {
      ({ id: bigTable, baseId: bigBase } = await createTableIn(service!.t, 'bench_big'));
      const viaApi = Math.min(BIG_RECORDS, API_SEED_LIMIT);
      log(`PG: seeding ${BIG_RECORDS.toLocaleString('en-US')} records into the filter table: ${viaApi.toLocaleString('en-US')} through the batch endpoint${viaApi < BIG_RECORDS ? ', the rest directly in SQL' : ''}…`);
      seedBig = await timed('PG4b. batch create (seeding the filter table)', () => seedPg(service!.t, db!, bigTable, BIG_RECORDS, SEED_BIG, API_SEED_LIMIT, 'PG filter table'));
      log(`  API part ${fmt(seedBig.api.recordsPerSecond)} records/s (batch p50 ${fmt(seedBig.api.stats.p50)} ms)` +
        (seedBig.sqlRecords ? `; SQL part ${seedBig.sqlRecords.toLocaleString('en-US')} records in ${seedBig.sqlSeconds.toFixed(1)} s` : ''));
      // The running service never heard of the rows written in SQL: a restart makes its indexer catch the table up.
      if (seedBig.sqlRecords) await restart(1, PROFILE);
      log('PG: waiting for the service\'s search indexer to catch up with the filter table…');
      bigIndexSeconds = await timed('PG3i. background search indexing', () => waitSearchCaughtUp(db!, bigTable, 'PG filter table'));
      log(`  caught up in ${bigIndexSeconds.toFixed(1)} s`);
    }
    log('PG: VACUUM ANALYZE of the seeded tables…');
    const vacuumFrom = performance.now();
    const schemas = (await db.query<{ id: string; base_id: string }>('SELECT id, base_id FROM tables WHERE id = ANY($1)', [[listTable, bigTable].filter(Boolean)])).rows;
    for (const t of schemas) {
      for (const prefix of ['rt', 'fts']) await db.query(`VACUUM ANALYZE "b_${t.base_id}"."${prefix}_${t.id}"`);
    }
    log(`  ${((performance.now() - vacuumFrom) / 1000).toFixed(1)} s`);
    await service!.settle();

    // The baseline starts after seeding, so it never competes with the service for the CPU.
    baseline = await start('pg-baseline', { cwd: ROOT, script: 'bench/pg-baseline-server.ts', logDir: part.tmp, env: { BASELINE_PG_URL: url } });
    await waitHealthy(baseline);
    const base: Target = { ...makeTarget('pg baseline', `http://127.0.0.1:${baseline.port}`, {}, CONNECTIONS, baseline.proc.pid), dbCpu };
    const ctx: PgCtx = { svc: service!.t, base, db, rows: part.rows, problems: part.problems };

    // A workload that throws is reported (a FAIL row and a PROBLEM) and the others still run.
    const guard = async (ids: string[], work: () => Promise<void>) => {
      if (!ids.some(has)) return;
      try {
        await work();
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        part.problems.push(`${ids.join('/')} could not run: ${msg.split('\n')[0].slice(0, 400)}`);
        log(`  ERROR in ${ids.join('/')}: ${msg}`);
        for (const id of ids.filter((w) => has(w) && !part.rows.some((r) => r.id === w))) {
          part.rows.push({ id, workload: '(did not run, see PROBLEM below)', unit: '', service: NaN, baseline: null, ratio: null, target: '-', pass: false });
        }
      }
    };
    if (seedList) await guard(['PG4'], () => pgBatchRows(ctx, listTable, seedList, listBusy));
    if (seedBig) part.rows.push(...bigSeedRows(seedBig, bigIndexSeconds));
    await guard(['PG1'], () => pgList(ctx, listTable));
    await guard(['PG5', 'PGT2'], () => pgDoors(ctx, service!.url, listBase, listTable));
    await guard(['PG2'], () => pgFilter(ctx, bigTable));
    await guard(['PG3'], () => pgSearch(ctx, service!.url, bigBase, bigTable, () => service!.settle()));
    await stop(baseline);
    await guard(['PGW'], () => scaleOut(ctx, listTable, async (n) => (await restart(n)).t));
  } finally {
    if (baseline) await stop(baseline).catch(() => undefined);
    if (service) await stop(service.child).catch(() => undefined);
    await db?.end().catch(() => undefined);
    // BENCH_KEEP keeps the database on a BENCH_POSTGRES_URL server; a throwaway cluster goes whatever happens.
    if (KEEP && process.env.BENCH_POSTGRES_URL) log(`PostgreSQL database kept: ${url}`);
    else await adminQuery(server.url, `DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch((e: Error) => log(`  could not drop ${dbName}: ${e.message}`));
    server.stop();
  }
}

export const postgresWanted = () => ENGINES.postgres && PG_WORKLOADS.some((w) => ONLY.has(w));
