// Test helpers: a fresh app on a temp data dir (and a fresh database on PostgreSQL), requests through its fetch handler, users with tokens.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type App, type AppOptions } from '../src/app.js';
import { readConfig } from '../src/config.js';
import { version } from '../src/version.js';
import { dropDatabase, freshDatabaseUrl } from './database.js';
import { send, type RequestOptions, type TestResponse } from './http.js';

export const ADMIN = { email: 'admin@test.local', password: 'admin-password' };

export type { TestResponse };

export interface TestClient {
  app: App;
  dir: string;
  /** On PostgreSQL, the app's own database (a restart on the same data passes it again). */
  databaseUrl?: string;
  adminToken: string;
  request(method: string, url: string, opts?: RequestOptions): Promise<TestResponse>;
  login(email: string, password: string): Promise<string>;
  /** Creates a user through the API and logs in; returns its id, token and default base. */
  user(name: string): Promise<{ id: string; token: string; defaultBaseId: string; email: string }>;
  graphql(query: string, variables?: Record<string, unknown>, token?: string | null): Promise<TestResponse>;
  /** Closes the app and builds a new one over the same data directory and database (`app` is then the new one). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export function tempDir(prefix = 'ts-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function makeApp(env: Record<string, string> = {}, options: AppOptions = {}): Promise<TestClient> {
  const dir = tempDir();
  // An explicit DATABASE_URL (empty for SQLite) wins over the run's engine.
  const databaseUrl = 'DATABASE_URL' in env ? undefined : await freshDatabaseUrl();
  const config = readConfig({
    DATA_DIR: dir, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, PUBLIC_URL: 'http://test.local',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...env,
  }, version);
  let app = await createApp(config, options);

  async function request(method: string, url: string, opts: RequestOptions = {}): Promise<TestResponse> {
    const token = opts.token === undefined ? client.adminToken : opts.token;
    return send((r) => app.fetch(r), method, `http://test.local${url}`, { ...opts, token });
  }

  async function login(email: string, password: string) {
    const res = await request('POST', '/api/auth/login', { token: null, body: { email, password } });
    if (res.status !== 200) throw new Error(`login failed: ${JSON.stringify(res.body)}`);
    return res.body.data.token as string;
  }

  let n = 0;
  const client: TestClient = {
    app,
    dir,
    databaseUrl,
    adminToken: '',
    request,
    login,
    async user(name) {
      const email = `${name.toLowerCase().replace(/\W/g, '')}${++n}@test.local`;
      const res = await request('POST', '/api/v1/users', { body: { email, name, password: 'password-123' } });
      if (res.status !== 201) throw new Error(`create user failed: ${JSON.stringify(res.body)}`);
      return { id: res.body.data.id, defaultBaseId: res.body.data.default_base_id, email, token: await login(email, 'password-123') };
    },
    graphql(query, variables, token) {
      return request('POST', '/graphql', { token, body: { query, variables } });
    },
    async restart() {
      await app.close();
      app = client.app = await createApp(config, options);
    },
    async close() {
      await app.close();
      await dropDatabase(databaseUrl);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  client.adminToken = await login(ADMIN.email, ADMIN.password);
  return client;
}

/** Creates a table with fields in a base and returns its id. */
export async function makeTable(c: TestClient, fields: unknown[], opts: { baseId?: string; token?: string; name?: string } = {}): Promise<string> {
  const res = await c.request('POST', '/api/v1/tables', {
    token: opts.token, body: { name: opts.name ?? `T${Math.random().toString(36).slice(2, 8)}`, base_id: opts.baseId, fields },
  });
  if (res.status !== 201) throw new Error(`create table failed: ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

/** Uploads a plugin package as the system administrator (a raw application/zip body) and enables it; returns its id. */
export async function installEnabledPlugin(c: TestClient, zip: Buffer): Promise<string> {
  const res = await c.request('POST', '/api/plugins/upload', { raw: new Uint8Array(zip), headers: { 'content-type': 'application/zip' } });
  if (res.status !== 201) throw new Error(`upload failed: ${JSON.stringify(res.body)}`);
  await c.request('PUT', `/api/plugins/${res.body.data.id}/status`, { body: { action: 'enable' } });
  return res.body.data.id as string;
}
