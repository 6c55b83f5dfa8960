// Online backup: `src/cli.ts backup` copies the database of a running, writing server into a sound copy that serves as a data dir.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DB_FILE } from '../src/db/sqlite-store.js';
import { ENGINE } from './database.js';
import { recordTable } from '../src/db/sqlite-record-store.js';
import { ROOT, api, client, listAllRecords, login, removeDir, startBatchWriter, startServer, stopAllServers, tempDir, type BatchWriter } from './server-process.js';

const BATCH = 100;
// Tokens name the server's public URL as issuer: the original and the restored server share one, as a real restore would.
const PUBLIC_URL = 'http://table-service.test';
const dirs: string[] = [];
let writer: BatchWriter | undefined;

afterAll(async () => {
  await writer?.stop();
  await stopAllServers();
  for (const d of dirs) removeDir(d);
});

function dir(prefix: string) {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
}

/** Runs `npx tsx src/cli.ts ...args` with DATA_DIR; never rejects on a non-zero exit. */
function cli(dataDir: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile('npx', ['tsx', 'src/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir }, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

describe('backup', () => {
  // The SQLite file's online copy; a PostgreSQL installation is backed up with pg_dump (the next test).
  it.runIf(ENGINE === 'sqlite')('copies the database of a running server while it is being written to', async () => {
    const dataDir = dir('ts-backup-data-');
    const outDir = dir('ts-backup-out-');
    const restoreDir = dir('ts-backup-restore-');
    const server = await startServer({ dataDir, env: { PUBLIC_URL } });
    const c = client(server.url, await login(server.url));
    const tableId: string = (await c.data('POST', '/api/v1/tables', {
      name: 'Busy',
      fields: [{ name: 'N', type: 'number' }, { name: 'S', type: 'text' }],
    }, 201)).id;

    writer = startBatchWriter(c, tableId, { concurrency: 2, batchSize: BATCH });
    await writer.waitForAcked(10 * BATCH);
    const before = new Set(writer.acked.keys());
    const file = path.join(outDir, 'backup.db');
    const run = await cli(dataDir, 'backup', file);
    const ackedDuring = writer.acked.size - before.size;
    await writer.stop();

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(file);
    expect(run.stdout).toMatch(/\d+ bytes, \d+ pages/);
    expect(writer.errors).toEqual([]);
    expect(writer.connectionErrors).toEqual([]);
    expect(ackedDuring, 'batches acknowledged while the backup ran').toBeGreaterThan(0);
    expect(fs.readdirSync(outDir), 'no temporary file is left beside the copy').toEqual(['backup.db']);

    let copied: string[];
    const copy = new Database(file, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      copied = copy.prepare(`SELECT _id FROM ${recordTable(tableId)}`).pluck().all() as string[];
    } finally {
      copy.close();
    }
    expect(copied.length).toBeGreaterThanOrEqual(before.size);
    // One snapshot: whole batches only.
    expect(copied.length % BATCH).toBe(0);
    const inCopy = new Set(copied);
    const missing = [...before].filter((id) => !inCopy.has(id));
    expect(missing, 'records acknowledged before the backup began').toEqual([]);
    await server.stop();

    // The copy and the signing key make a working data directory; tokens of the original server stay valid.
    fs.copyFileSync(file, path.join(restoreDir, DB_FILE));
    fs.copyFileSync(path.join(dataDir, 'signing-key.json'), path.join(restoreDir, 'signing-key.json'));
    const restored = await startServer({ dataDir: restoreDir, env: { PUBLIC_URL } });
    const r = client(restored.url, await login(restored.url));
    const records = await listAllRecords(r, tableId);
    expect(records.map((x) => x.id).sort()).toEqual([...copied].sort());
    for (const rec of records) if (writer.acked.has(rec.id)) expect(rec.fields).toEqual(writer.acked.get(rec.id));
    const oldToken = await api(restored.url, 'GET', `/api/v1/tables/${tableId}/records?page_size=1`, { token: c.token });
    expect(oldToken.status).toBe(200);
    expect(oldToken.body.data.total).toBe(copied.length);
    await restored.stop();
  });

  it('refuses to back up a PostgreSQL installation, naming pg_dump', async () => {
    const dataDir = dir('ts-backup-pg-');
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile('npx', ['tsx', 'src/cli.ts', 'backup', path.join(dataDir, 'x.db')], {
        cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: 'postgres://someone@127.0.0.1:5432/tables' }, timeout: 30_000,
      }, (error, _stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stderr }));
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('DATABASE_URL names PostgreSQL: back it up with pg_dump');
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it('fails with a clear message when there is no database or the target cannot be written', async () => {
    const empty = dir('ts-backup-empty-');
    const dataDir = dir('ts-backup-src-');
    new Database(path.join(dataDir, DB_FILE)).close();
    const [noDb, badTarget, usage, help] = await Promise.all([
      cli(empty, 'backup', path.join(empty, 'x.db')),
      cli(dataDir, 'backup', path.join(dataDir, 'no-such-dir', 'x.db')),
      cli(dataDir, 'backup'),
      cli(dataDir, 'help'),
    ]);
    expect(noDb.code).toBe(1);
    expect(noDb.stderr).toContain(`No database at ${path.join(empty, DB_FILE)}`);
    expect(fs.readdirSync(empty), 'the CLI creates no database').toEqual([]);
    expect(badTarget.code).toBe(1);
    expect(badTarget.stderr).toMatch(/Cannot write .*no-such-dir.*does not exist or is not writable/);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Usage:');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('backup <file>');
  });
});
