// The shape of the house, checked from the source: which layer may import which, where SQLite may appear, and how long
// a file may grow. A change that breaks a boundary fails here with the file and line that crossed it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './server-process.js';

/** Every .ts and .vue file under `dir` (relative to the repository), generated and dependency folders excluded. */
function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) {
        if (!['node_modules', 'dist', 'migrations'].includes(entry.name)) walk(child);
      } else if (/\.(ts|vue)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(child);
    }
  };
  walk(dir);
  return out;
}

/** Lines of `file` that import (value or type) from a module whose specifier matches `target`. */
function importsOf(file: string, target: RegExp, opts: { typeOnlyAllowed?: boolean } = {}): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const hits: string[] = [];
  const statement = /^(import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms;
  for (const m of text.matchAll(statement)) {
    if (opts.typeOnlyAllowed && m[2]) continue;
    const spec = m[3].startsWith('.') ? path.join(path.dirname(file), m[3]) : m[3];
    if (target.test(spec)) hits.push(`${file}:${text.slice(0, m.index).split('\n').length}: ${m[0].split('\n')[0]}`);
  }
  return hits;
}

describe('layers', () => {
  it('no file under rest-adapters/ imports src/domain/ (REST maps onto GraphQL operations only)', () => {
    expect(sources('rest-adapters').flatMap((f) => importsOf(f, /^src\/domain\//))).toEqual([]);
  });

  it('no file under src/domain/ imports schema/ (the domain knows nothing of GraphQL)', () => {
    expect(sources('src/domain').flatMap((f) => importsOf(f, /^schema\//))).toEqual([]);
  });

  it('only the SQLite store implementation imports better-sqlite3 (the domain talks to the store interface)', () => {
    const allowed = new Set(['src/db/sqlite-store.ts', 'src/db/sqlite-record-store.ts', 'src/db/sqlite-answer-file.ts', 'src/db/copy-to-postgres.ts', 'src/cli.ts']);
    const offenders = [...sources('src'), ...sources('schema'), ...sources('rest-adapters'), ...sources('plugins-runtime')]
      .filter((f) => !allowed.has(f) && !f.startsWith('src/db/record-store/'))
      .flatMap((f) => importsOf(f, /^(better-sqlite3|drizzle-orm\/better-sqlite3)/, { typeOnlyAllowed: f === 'src/db/store.ts' }));
    expect(offenders).toEqual([]);
  });

  it('the domain takes its table objects from the store, importing only types from the schema definition', () => {
    expect(sources('src/domain').flatMap((f) => importsOf(f, /^src\/db\/schema(\.js)?$/, { typeOnlyAllowed: true }))).toEqual([]);
  });

  it('the domain never calls the SQLite-only query methods (.all(), .get(), .run()) or a connection directly', () => {
    const offenders = sources('src/domain').flatMap((file) =>
      fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n')
        .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
        .filter(({ line }) => /\.(all|get|run)\(\)|\bsqlite\.|\.pragma\(|\.exec\(`/.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`));
    expect(offenders).toEqual([]);
  });
});

describe('size', () => {
  it('no source file is over 400 lines (tests and generated files aside)', () => {
    const long = ['src', 'schema', 'rest-adapters', 'plugins-runtime', 'web/src', 'bench'].flatMap(sources)
      .map((f) => ({ f, lines: fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 400)
      .map(({ f, lines }) => `${f}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
