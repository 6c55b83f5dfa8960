// Which engine this test run uses, a fresh database per app on PostgreSQL, and raw SQL for the few tests that look
// beneath the API. `npm test` (test/run-engines.ts) runs the suite once per engine; TEST_DATABASE_URL names the cluster.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { App } from '../src/app.js';

/** The PostgreSQL server of this run (`postgres://.../postgres`), or undefined on SQLite. */
export const POSTGRES_URL = process.env.TEST_DATABASE_URL || undefined;
export const ENGINE: 'sqlite' | 'postgres' = POSTGRES_URL ? 'postgres' : 'sqlite';
/** A database the runner migrated once, copied for every test app (CREATE DATABASE ... TEMPLATE). */
const TEMPLATE = process.env.TEST_DATABASE_TEMPLATE || undefined;

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** On PostgreSQL, a new empty (migrated, when the runner made a template) database's URL; undefined on SQLite. */
export async function freshDatabaseUrl(): Promise<string | undefined> {
  if (!POSTGRES_URL) return undefined;
  const name = `t_${process.pid}_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"${TEMPLATE ? ` TEMPLATE "${TEMPLATE}"` : ''}`));
  return withDatabase(POSTGRES_URL, name);
}

export async function dropDatabase(url: string | undefined): Promise<void> {
  if (!url || !POSTGRES_URL) return;
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/**
 * The database a real server process started on `dataDir` uses: on PostgreSQL one made on its first start and
 * remembered in the directory, so a restart on the same directory finds its data again.
 */
export async function databaseEnvFor(dataDir: string): Promise<Record<string, string>> {
  if (!POSTGRES_URL) return {};
  const file = path.join(dataDir, 'test-database-url');
  if (!fs.existsSync(file)) fs.writeFileSync(file, (await freshDatabaseUrl())!);
  return { DATABASE_URL: fs.readFileSync(file, 'utf8') };
}

/** Raw SQL on an app's database, `?` placeholders on both engines; rows as objects. */
export function testSql(app: App) {
  const store = app.store;
  return {
    async rows<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
      if (store.engine === 'sqlite') {
        const statement = app.sqlite!.prepare(text);
        if (statement.reader) return statement.all(...params) as T[];
        statement.run(...params);
        return [];
      }
      let n = 0;
      return (await (store as unknown as { pool: pg.Pool }).pool.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as T[];
    },
    async run(text: string, params: unknown[] = []): Promise<void> {
      await this.rows(text, params);
    },
    /** The SQL name of a user table's record table (on PostgreSQL inside its base's schema). */
    async recordTable(tableId: string): Promise<string> {
      if (store.engine === 'sqlite') return `"rt_${tableId}"`;
      const [t] = await this.rows<{ base_id: string }>('SELECT base_id FROM tables WHERE id = ?', [tableId]);
      return `"b_${t.base_id}"."rt_${tableId}"`;
    },
  };
}

/** The names of the indexes on a user table's record table. */
export async function indexNames(app: App, tableId: string): Promise<string[]> {
  const sql = testSql(app);
  const rows = ENGINE === 'sqlite'
    ? await sql.rows<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", [`rt_${tableId}`])
    : await sql.rows<{ name: string }>('SELECT indexname AS name FROM pg_indexes WHERE tablename = ?', [`rt_${tableId}`]);
  return rows.map((r) => r.name);
}

/**
 * Every SQL text the app sent to its database, on any connection, while `work` ran: on SQLite every statement prepared,
 * run or executed (a cached statement runs without being prepared again), on PostgreSQL every query.
 */
export async function capturedSql(app: App, work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const restore: Array<() => void> = [];
  const wrap = (proto: Record<string, unknown>, name: string, textOf: (self: any, args: unknown[]) => string) => {
    const original = proto[name] as (...args: unknown[]) => unknown;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      sent.push(textOf(this, args));
      return original.apply(this, args);
    };
    restore.push(() => (proto[name] = original));
  };
  if (ENGINE === 'sqlite') {
    const db = app.sqlite!;
    const statementProto = Object.getPrototypeOf(db.prepare('SELECT 1'));
    for (const m of ['get', 'all', 'run', 'iterate']) wrap(statementProto, m, (self) => self.source);
    wrap(Object.getPrototypeOf(db), 'prepare', (_self, args) => String(args[0]));
    wrap(Object.getPrototypeOf(db), 'exec', (_self, args) => String(args[0]));
  } else {
    wrap(pg.Client.prototype as unknown as Record<string, unknown>, 'query', (_self, args) => {
      const q = args[0] as unknown;
      return typeof q === 'string' ? q : String((q as { text?: string }).text ?? '');
    });
  }
  try {
    await work();
    return sent;
  } finally {
    for (const undo of restore) undo();
  }
}

/**
 * The plan the database makes for `text` with `params`, as one line of text. On PostgreSQL, sequential scans are
 * priced out first: test tables are small enough that a scan would win, and the question is whether an index CAN serve.
 */
export async function queryPlan(app: App, text: string, params: unknown[]): Promise<string> {
  if (ENGINE === 'sqlite') {
    return (app.sqlite!.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
  }
  const client = await (app.store as unknown as { pool: pg.Pool }).pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_seqscan = off');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
    return rows.map((r) => r['QUERY PLAN'].trim()).join(' | ');
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

/** Whether a plan reads through the index `name`. */
export function planUses(plan: string, name: string): boolean {
  return ENGINE === 'sqlite'
    ? plan.includes(`USING INDEX ${name}`) || plan.includes(`USING COVERING INDEX ${name}`)
    : new RegExp(`(Index Scan|Index Only Scan) using "?${name}"?|Bitmap Index Scan on "?${name}"?`).test(plan);
}

/** Whether a plan sorts rows itself rather than reading them in order from an index. */
export function planSorts(plan: string): boolean {
  // SQLite: `FOR ORDER BY`, or `FOR LAST TERM OF ORDER BY` / `FOR RIGHT PART OF ORDER BY` where the index orders only a prefix.
  return ENGINE === 'sqlite' ? /USE TEMP B-TREE FOR .*ORDER BY/.test(plan) : /\bSort\b/.test(plan);
}
