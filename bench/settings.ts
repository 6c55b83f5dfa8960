// The bench's settings from the environment (see bench/run.ts's header), shared by the SQLite and PostgreSQL parts.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Req } from './http-load.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The checkout whose src/main.ts is benchmarked: this one unless BENCH_SERVICE_DIR names another (e.g. to compare commits).
export const SERVICE_DIR = path.resolve(process.env.BENCH_SERVICE_DIR ?? ROOT);
/**
 * The node flags `npm start` gives the service (package.json's start script, e.g. its young-generation size), so the
 * bench runs the service as production does; none for a checkout whose start script has none.
 */
export const SERVICE_NODE_FLAGS: string[] = (() => {
  const start = (JSON.parse(fs.readFileSync(path.join(SERVICE_DIR, 'package.json'), 'utf8')) as { scripts?: { start?: string } }).scripts?.start ?? '';
  const args = start.split(/\s+/);
  return args.slice(args.indexOf('node') + 1).filter((a) => a.startsWith('--') && a !== '--enable-source-maps');
})();
export const RESULTS = path.join(ROOT, 'bench', 'results');
export const SCALE = Number(process.env.BENCH_SCALE ?? 1);
if (!(SCALE > 0)) throw new Error(`BENCH_SCALE must be a positive number, got ${process.env.BENCH_SCALE}`);

const ENGINE_NAME = (process.env.BENCH_ENGINE ?? 'both').trim().toLowerCase();
if (!['sqlite', 'postgres', 'both'].includes(ENGINE_NAME)) throw new Error(`BENCH_ENGINE must be sqlite, postgres or both, got ${process.env.BENCH_ENGINE}`);
export const ENGINES = { sqlite: ENGINE_NAME !== 'postgres', postgres: ENGINE_NAME !== 'sqlite' };

/** PostgreSQL workloads: list, eq filter, keyword search, batch create, and scale-out over WORKERS (PGW and PGWF rows). */
export const PG_WORKLOADS = ['PG1', 'PG2', 'PG3', 'PG4', 'PG5', 'PGT2', 'PGW'];
const ALL_WORKLOADS = ['1', '2', '3', '4', '5', 'T1', 'T2', 'T3', 'T4', 'W1', 'W2', 'C1', 'C2', 'C3', 'C4', 'E1', 'E2', 'E3', 'WH', 'I1', 'X1', 'V1', 'V2', 'S', 'P', ...PG_WORKLOADS];
export const ONLY = new Set((process.env.BENCH_ONLY ?? ALL_WORKLOADS.join(',')).split(',').map((s) => s.trim().toUpperCase()).filter(Boolean));
export const PROFILE = process.env.BENCH_PROFILE === '1';
export const KEEP = process.env.BENCH_KEEP === '1';

export const PAGE_SIZE = 100;
export const CONNECTIONS = 16;
// Record counts shrink with the scale, but never below what makes a workload meaningful (a few pages, a few batches).
export const LIST_RECORDS = Math.max(2_000, Math.round(100_000 * SCALE));
export const BIG_RECORDS = Math.max(10_000, Math.round(1_000_000 * SCALE));
export const LIST_PAGES = Math.min(50, Math.ceil(LIST_RECORDS / PAGE_SIZE));
// Time bounds: full length at scale 1, one second floor for smoke runs.
export const THROUGHPUT_SECONDS = Number(process.env.BENCH_SECONDS ?? 0) || Math.min(8, Math.max(1, 8 * SCALE));
export const LATENCY_SECONDS = Math.min(6, Math.max(1, 6 * SCALE));
export const SLOW_SECONDS = Math.min(10, Math.max(2, 10 * SCALE));
// Issue 3 and 4 workloads: in-process token checks, workflow runs.
export const VERIFY_REUSE_CALLS = Math.max(10_000, Math.round(100_000 * Math.min(1, SCALE * 10)));
export const VERIFY_DISTINCT = Math.max(400, Math.round(2_000 * Math.min(1, SCALE * 10)));
/** Records in each of C2's two tables (with and without computed fields). */
export const COMPUTED_LIST_RECORDS = Math.max(2_000, Math.round(20_000 * SCALE));
export const WORKFLOW_RECORDS = Math.max(1_000, Math.round(5_000 * Math.min(1, SCALE * 10)));
/** WH: records (each one record.created delivery) written to a table with a webhook. */
export const WEBHOOK_RECORDS = Math.max(2_000, Math.round(20_000 * Math.min(1, SCALE * 10)));

export const ADMIN = { email: 'bench@bench.local', password: 'bench-password-1' };
/** PRNG seeds of the two seeded tables: the same data on both engines. */
export const SEED_LIST = 1;
export const SEED_BIG = 2;

export const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));
export const listPath = (tableId: string, page: number, extra = '') => `/api/v1/tables/${tableId}/records?page=${page}&page_size=${PAGE_SIZE}${extra}`;
export const eqFilter = (field: string, value: unknown) => ({ conjunction: 'and', conditions: [{ field, operator: 'eq', value }] });

const GRAPHQL_LIST = 'query Records($tableId: ID!, $page: Int, $pageSize: Int) { records(tableId: $tableId, page: $page, pageSize: $pageSize) { items { id fields createdAt updatedAt } total page pageSize } }';
/** The /graphql request for the page that `listPath` asks of the REST facade. */
export const graphqlList = (tableId: string, page: number): Req => ({
  method: 'POST', path: '/graphql', body: JSON.stringify({ query: GRAPHQL_LIST, variables: { tableId, page, pageSize: PAGE_SIZE } }),
});
