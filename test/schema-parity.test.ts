// Keeps src/db/pg-schema.ts in step with src/db/schema.ts: same tables, columns, keys, indexes and JS value types, so a
// column added on one engine only fails here (by table and column) instead of at run time on the other engine.
import { describe, expect, it } from 'vitest';
import { getTableColumns, getTableName, is, type Column } from 'drizzle-orm';
import { getTableConfig as sqliteConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { getTableConfig as pgConfig, PgTable } from 'drizzle-orm/pg-core';
import * as sqlite from '../src/db/schema.js';
import * as pg from '../src/db/pg-schema.js';

/** Tables that exist only on PostgreSQL (state SQLite keeps in DATA_DIR files or in the process's memory). */
const PG_ONLY = new Set(['serviceKeys', 'rateHits', 'loginFailures', 'writeVersion']);
/** The insertion-order column of the logs SQLite orders by rowid (Store.insertionOrder); PostgreSQL needs a real one. */
type InsertionOrder = 'seq';
const INSERTION_ORDER = 'seq';
const LOGS = new Set(['app_tokens', 'audit_log', 'workflow_runs', 'plugin_runs', 'jobs']);

// Compile-time half: the domain is typed against schema.ts and handed pg-schema.ts cast, so rows must have the same
// TypeScript shape. A mismatch is a tsc error naming the export (test/typecheck.test.ts runs tsc).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Shared = keyof typeof sqlite & keyof typeof pg;
type Logs = 'appTokens' | 'auditLog' | 'workflowRuns' | 'pluginRuns' | 'jobs';
type Pg<K extends Shared, R> = K extends Logs ? Omit<R, InsertionOrder> : R;
type SelectParity = { [K in Shared]: Same<(typeof sqlite)[K]['$inferSelect'], Pg<K, (typeof pg)[K]['$inferSelect']>> };
type InsertParity = { [K in Shared]: Same<(typeof sqlite)[K]['$inferInsert'], Pg<K, (typeof pg)[K]['$inferInsert']>> };
const selectParity: { [K in Shared]: true } = null as unknown as SelectParity;
const insertParity: { [K in Shared]: true } = null as unknown as InsertParity;
void selectParity;
void insertParity;

type Kind = 'text' | 'boolean' | 'integer' | 'json' | 'blob' | 'real';

/** The engine-neutral kind of a column: what JavaScript value it holds, per the mapping pg-schema.ts follows. */
function kindOf(column: Column): Kind | `unmapped ${string}` {
  const sqliteKinds: Record<string, Kind> = {
    SQLiteText: 'text', SQLiteBoolean: 'boolean', SQLiteInteger: 'integer',
    SQLiteTextJson: 'json', SQLiteBlobBuffer: 'blob', SQLiteReal: 'real',
  };
  const pgKinds: Record<string, Kind> = {
    PgText: 'text', PgBoolean: 'boolean', PgBigInt53: 'integer', PgJson: 'json', PgDoublePrecision: 'real',
  };
  if (column.columnType === 'PgCustomColumn' && column.getSQLType() === 'bytea') return 'blob';
  return sqliteKinds[column.columnType] ?? pgKinds[column.columnType] ?? `unmapped ${column.columnType} (${column.getSQLType()})`;
}

interface ColumnShape {
  name: string; kind: string; notNull: boolean; primary: boolean; unique: boolean;
  hasDefault: boolean; default: string; enumValues: string;
}

interface TableShape {
  name: string;
  columns: Record<string, ColumnShape>;
  primaryKeys: string[];
  indexes: Record<string, string>;
  foreignKeys: string[];
}

function columnShape(column: Column): ColumnShape {
  return {
    name: column.name,
    kind: kindOf(column),
    notNull: column.notNull,
    primary: column.primary,
    unique: column.isUnique,
    hasDefault: column.hasDefault,
    default: JSON.stringify(column.default) ?? 'none',
    enumValues: JSON.stringify(column.enumValues ?? []),
  };
}

/** An index column's SQL name, or a marker for an expression (compared as such). */
function indexColumn(c: unknown): string {
  return c && typeof c === 'object' && 'name' in c && typeof c.name === 'string' ? c.name : '<expression>';
}

function shape(table: SQLiteTable | PgTable): TableShape {
  const config = is(table, SQLiteTable) ? sqliteConfig(table) : pgConfig(table as PgTable);
  const columns = Object.fromEntries(Object.entries(getTableColumns(table))
    .filter(([key, c]) => !(key === INSERTION_ORDER && is(c.table, PgTable) && LOGS.has(getTableName(c.table))))
    .map(([key, c]) => [key, columnShape(c)]));
  const indexes = Object.fromEntries(config.indexes.map((i) => {
    const c = i.config as { name?: string; unique?: boolean; columns: unknown[]; where?: unknown };
    return [c.name ?? '<unnamed>', `${c.unique ? 'unique ' : ''}(${c.columns.map(indexColumn).join(', ')})${c.where ? ' partial' : ''}`];
  }));
  const foreignKeys = config.foreignKeys.map((fk) => {
    const r = fk.reference();
    return `(${r.columns.map((c) => c.name).join(', ')}) -> ${getTableName(r.foreignTable)}(${r.foreignColumns.map((c) => c.name).join(', ')})`
      + ` on delete ${fk.onDelete ?? 'no action'} on update ${fk.onUpdate ?? 'no action'}`;
  }).sort();
  const primaryKeys = config.primaryKeys.map((pk) => `(${pk.columns.map((c) => c.name).join(', ')})`).sort();
  return { name: config.name, columns, primaryKeys, indexes, foreignKeys };
}

function tablesOf(module: Record<string, unknown>, kind: typeof SQLiteTable | typeof PgTable): Map<string, TableShape> {
  const out = new Map<string, TableShape>();
  for (const [key, value] of Object.entries(module)) if (is(value, kind)) out.set(key, shape(value as SQLiteTable | PgTable));
  return out;
}

const lite = tablesOf(sqlite, SQLiteTable);
const post = tablesOf(pg, PgTable);

/** Differences between the two schemas, as sentences naming the table and column; empty when in step. */
function differences(a: Map<string, TableShape>, b: Map<string, TableShape>, pgOnly: Set<string>): string[] {
  const out: string[] = [];
  for (const key of a.keys()) if (!b.has(key)) out.push(`table ${key} (${a.get(key)!.name}) is in schema.ts but not in pg-schema.ts`);
  for (const key of b.keys()) if (!a.has(key) && !pgOnly.has(key)) out.push(`table ${key} (${b.get(key)!.name}) is in pg-schema.ts but not in schema.ts`);
  for (const [key, l] of a) {
    const p = b.get(key);
    if (!p) continue;
    const where = `table ${key} (${l.name})`;
    if (l.name !== p.name) out.push(`${where}: SQL name is ${l.name} in schema.ts but ${p.name} in pg-schema.ts`);
    for (const col of Object.keys(l.columns)) if (!(col in p.columns)) out.push(`${where}: column ${col} (${l.columns[col].name}) is in schema.ts but not in pg-schema.ts`);
    for (const col of Object.keys(p.columns)) if (!(col in l.columns)) out.push(`${where}: column ${col} (${p.columns[col].name}) is in pg-schema.ts but not in schema.ts`);
    for (const [col, lc] of Object.entries(l.columns)) {
      const pc = p.columns[col];
      if (!pc) continue;
      for (const prop of Object.keys(lc) as Array<keyof ColumnShape>) {
        if (lc[prop] !== pc[prop]) out.push(`${where}: column ${col} (${lc.name}): ${prop} is ${lc[prop]} in schema.ts but ${pc[prop]} in pg-schema.ts`);
      }
    }
    const list = (name: string, x: string[], y: string[]) => {
      for (const v of x) if (!y.includes(v)) out.push(`${where}: ${name} ${v} is in schema.ts but not in pg-schema.ts`);
      for (const v of y) if (!x.includes(v)) out.push(`${where}: ${name} ${v} is in pg-schema.ts but not in schema.ts`);
    };
    list('primary key', l.primaryKeys, p.primaryKeys);
    list('foreign key', l.foreignKeys, p.foreignKeys);
    list('index', Object.entries(l.indexes).map(([n, d]) => `${n} ${d}`), Object.entries(p.indexes).map(([n, d]) => `${n} ${d}`));
  }
  return out;
}

describe('schema parity (SQLite schema.ts and PostgreSQL pg-schema.ts)', () => {
  it('finds the tables of both files', () => {
    expect(lite.size).toBeGreaterThan(10);
    expect([...post.keys()].filter((k) => !lite.has(k))).toEqual([...PG_ONLY]);
  });

  it('every column has a kind with a twin on the other engine', () => {
    const unmapped = [...lite, ...post].flatMap(([key, t]) => Object.entries(t.columns)
      .filter(([, c]) => c.kind.startsWith('unmapped'))
      .map(([col, c]) => `table ${key} (${t.name}): column ${col} (${c.name}) is ${c.kind}`));
    expect(unmapped).toEqual([]);
  });

  it('tables, columns, keys, indexes and foreign keys are the same', () => {
    expect(differences(lite, post, PG_ONLY)).toEqual([]);
  });

  it('bytea reads back as a Buffer, like SQLite blobs', () => {
    const column = getTableColumns(pg.pluginFiles).content;
    const value = column.mapFromDriverValue(Buffer.from([0, 255]));
    expect(Buffer.isBuffer(value) && [...value]).toEqual([0, 255]);
  });

  it('the comparison notices a column present on one side only', () => {
    // Against a copy of the SQLite side, so this check holds whatever the real pg-schema.ts says.
    const extra = structuredClone(lite);
    extra.get('users')!.columns.nickname = { ...extra.get('users')!.columns.name, name: 'nickname' };
    expect(differences(lite, lite, PG_ONLY)).toEqual([]);
    expect(differences(lite, extra, PG_ONLY)).toEqual(['table users (users): column nickname (nickname) is in pg-schema.ts but not in schema.ts']);
  });
});
