// Operating the service (contract 10): configuration and .env, JSON logs without secrets, /metrics, /healthz, --help.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIAL_PASSWORD_FILE, type App } from '../src/app.js';
import { ConfigError, readConfig, withDotEnv } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { ADMIN, makeApp, tempDir } from './helpers.js';
import { send, type RequestOptions } from './http.js';
import { removeDir, ROOT, startServer, type ServerProcess } from './server-process.js';

// tsx resolved from here, so a command can run with a working directory outside the repository.
const TSX = [process.execPath, '--import', import.meta.resolve('tsx')];
const run = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) =>
  spawnSync(TSX[0], [...TSX.slice(1), ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, encoding: 'utf8', timeout: 60_000 });

describe('configuration', () => {
  it.each([
    ['PORT', 'abc'], ['PORT', '70000'], ['LOG_LEVEL', 'loud'], ['DATABASE_URL', 'not a url'], ['DATABASE_URL', 'mysql://x@y/z'],
    ['PUBLIC_URL', 'ftp://example.com'], ['USER_TOKEN_TTL', '-1'], ['SQLITE_SYNCHRONOUS', 'OFF'], ['TRUST_PROXY', 'maybe'],
    ['PLUGIN_PROXY_ALLOW_PRIVATE', 'localhost'], ['METRICS_TOKEN', 'short'], ['ADMIN_EMAIL', 'not-an-email'],
  ])('%s=%s is refused naming the variable', (name, value) => {
    let error: unknown;
    try {
      readConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(name);
    expect((error as Error).message.startsWith(name)).toBe(true);
  });

  it('takes variables from .env that the environment does not set', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, '.env'), '# comment\nPORT=9123\nLOG_LEVEL=debug\nHOST="0.0.0.0"\n');
    const config = readConfig(withDotEnv({ LOG_LEVEL: 'warn' }, dir));
    expect(config).toMatchObject({ port: 9123, logLevel: 'warn', host: '0.0.0.0' });
    expect(readConfig(withDotEnv({}, path.join(dir, 'missing'))).port).toBe(8080);
    removeDir(dir);
  });

  it('a start with a bad variable prints one line naming it and exits 1, also from .env', () => {
    const bad = run(['src/main.ts'], { env: { PORT: 'abc', DATA_DIR: tempDir() } });
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/PORT must be an integer/);
    expect(bad.stdout).toBe('');
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, '.env'), 'LOG_LEVEL=chatty\n');
    const fromFile = run([path.join(ROOT, 'src/main.ts')], { cwd, env: { DATA_DIR: tempDir() } });
    expect(fromFile.status).toBe(1);
    expect(fromFile.stderr).toMatch(/^table-service: configuration error: LOG_LEVEL must be one of debug, info, warn, error/);
  }, 60_000);
});

describe('--help on every command', () => {
  it.each([
    [['src/main.ts', '--help'], /Usage: npm start/],
    [['src/cli.ts', 'backup', '--help'], /backup <file>/],
    [['src/cli.ts', 'plugin', '--help'], /plugin validate <dir>/],
    [['src/cli.ts', 'plugin', 'pack', '-h'], /plugin pack <dir>/],
    [['src/cli.ts', '--help'], /Commands:/],
    [['schema/print.ts', '--help'], /Usage/],
  ])('%j prints its usage, exits 0 and writes nothing', (args, usage) => {
    const cwd = tempDir();
    const r = run((args as string[]).map((a) => (a.endsWith('.ts') ? path.join(ROOT, a) : a)), { cwd, env: { DATA_DIR: path.join(cwd, 'data') } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(usage as RegExp);
    expect(fs.readdirSync(cwd)).toEqual([]);
    removeDir(cwd);
  }, 60_000);
});

/** An app whose log lines land in `lines`, parsed. */
async function appWithLog(env: Record<string, string> = {}) {
  let raw = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      raw += chunk.toString();
      done();
    },
  });
  const c = await makeApp({ LOG_LEVEL: 'debug', ...env }, { log: createLogger('debug', sink) });
  return {
    app: c.app, dir: c.dir, raw: () => raw,
    get lines(): Record<string, any>[] {
      return raw.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    },
  };
}

const call = (app: App, method: string, url: string, opts: RequestOptions = {}) => send((r) => app.fetch(r), method, `http://test.local${url}`, opts);

describe('logs', () => {
  let t: Awaited<ReturnType<typeof appWithLog>>;
  beforeAll(async () => {
    t = await appWithLog();
  });
  afterAll(async () => {
    await t.app.close();
    removeDir(t.dir);
  });

  it('writes one JSON line per request with the route template, status, duration and actor', async () => {
    const login = await call(t.app, 'POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } });
    const token = login.body.data.token;
    const base = await call(t.app, 'POST', '/api/v1/bases', { token, body: { name: 'Logged' } });
    const table = await call(t.app, 'POST', '/api/v1/tables', { token, body: { name: 'T', base_id: base.body.data.id }, headers: { 'x-request-id': 'my-request-1' } });
    expect(table.status).toBe(201);
    await call(t.app, 'GET', `/api/v1/tables/${table.body.data.id}`, { token, headers: { 'x-request-id': 'my-request-2' } });
    const line = t.lines.find((l) => l.request_id === 'my-request-2')!;
    expect(line).toMatchObject({ level: 'info', method: 'GET', route: '/api/v1/tables/{table_id}', status: 200, actor: login.body.data.user.id });
    expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(typeof line.ms).toBe('number');
    expect(t.lines.find((l) => l.request_id === 'my-request-1')).toMatchObject({ method: 'POST', route: '/api/v1/tables', status: 201 });
    const gql = await call(t.app, 'POST', '/graphql', { token, body: { query: '{ me { id } }' }, headers: { 'x-request-id': 'my-request-3' } });
    expect(gql.status).toBe(200);
    expect(t.lines.find((l) => l.request_id === 'my-request-3')).toMatchObject({ route: '/graphql', status: 200, actor: login.body.data.user.id });
    await call(t.app, 'GET', '/api/v1/nowhere', { headers: { 'x-request-id': 'my-request-4' } });
    expect(t.lines.find((l) => l.request_id === 'my-request-4')).toMatchObject({ route: null, status: 404, actor: null });
  });

  it('an internal error logs its cause with the request_id the client got, and the client sees no detail', async () => {
    const login = await call(t.app, 'POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } });
    const original = t.app.services.bases.listBases;
    t.app.services.bases.listBases = () => {
      throw new Error('disk on fire: SELECT * FROM secret_place');
    };
    try {
      for (const [url, opts] of [
        ['/api/v1/bases', { method: 'GET' }],
        ['/graphql', { method: 'POST', body: { query: '{ bases { items { id } } }' } }],
      ] as const) {
        const res = await call(t.app, opts.method, url, { token: login.body.data.token, body: 'body' in opts ? opts.body : undefined });
        expect(res.status).toBe(500);
        expect(res.text).not.toContain('disk on fire');
        expect(res.text).not.toContain('SELECT');
        const requestId = res.headers.get('x-request-id')!;
        if (url !== '/graphql') expect(res.body.request_id).toBe(requestId);
        const line = t.lines.find((l) => l.request_id === requestId)!;
        expect(line).toMatchObject({ level: 'error', status: 500 });
        expect(line.err.message).toContain('disk on fire');
      }
    } finally {
      t.app.services.bases.listBases = original;
    }
  });

  it('no token, password, client secret or authorization header reaches a log line', async () => {
    const password = 'Very-Secret-Password-42';
    const login = await call(t.app, 'POST', '/api/auth/login', { body: { email: ADMIN.email, password: ADMIN.password } });
    const token: string = login.body.data.token;
    await call(t.app, 'POST', '/api/v1/users', { token, body: { email: 'secret@test.local', name: 'S', password } });
    const userLogin = await call(t.app, 'POST', '/api/auth/login', { body: { email: 'secret@test.local', password } });
    await call(t.app, 'POST', '/api/auth/login', { body: { email: 'secret@test.local', password: 'wrong-password-guess' } });
    const base = await call(t.app, 'POST', '/api/v1/bases', { token, body: { name: 'Secrets' } });
    const created = await call(t.app, 'POST', '/api/oauth/apps', {
      token, body: { app_name: 'S', callback_url: 'https://c.example/cb', scopes: ['base:read'], allowed_bases: [base.body.data.id] },
    });
    const secret: string = created.body.data.client_secret;
    const issued = await call(t.app, 'POST', '/api/oauth/token', {
      raw: `grant_type=client_credentials&client_id=${created.body.data.client_id}&client_secret=${secret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const appToken: string = issued.body.access_token;
    await call(t.app, 'GET', '/api/open/v1/bases', { token: appToken, headers: { cookie: 'session=cookie-value-123' } });
    await call(t.app, 'POST', '/graphql', { token, body: { query: 'mutation($p: String!) { login(email: "x@y.z", password: $p) { token } }', variables: { p: password } } });
    const raw = t.raw();
    expect(raw.length).toBeGreaterThan(0);
    for (const s of [password, 'wrong-password-guess', ADMIN.password, token, userLogin.body.data.token, secret, appToken, 'cookie-value-123']) {
      expect(raw, `a log line holds ${s.slice(0, 12)}...`).not.toContain(s);
    }
  });
});

describe('/metrics and /healthz', () => {
  it('/metrics is 404 without METRICS_TOKEN', async () => {
    const t = await appWithLog();
    expect((await call(t.app, 'GET', '/metrics')).status).toBe(404);
    await t.app.close();
  });

  it('/metrics answers Prometheus text only with the token', async () => {
    const t = await appWithLog({ METRICS_TOKEN: 'metrics-token-0123456789' });
    await call(t.app, 'GET', '/api/v1/tables');
    expect((await call(t.app, 'GET', '/metrics')).status).toBe(401);
    expect((await call(t.app, 'GET', '/metrics', { token: 'metrics-token-wrong-56789' })).status).toBe(401);
    const res = await call(t.app, 'GET', '/metrics', { token: 'metrics-token-0123456789' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/http_requests_total\{route="\/api\/v1\/tables",method="GET",status="401"\} 1/);
    expect(res.text).toMatch(/http_request_duration_seconds_bucket\{le="0.005",route="\/api\/v1\/tables"\}/);
    expect(res.text).toMatch(/queue_depth\{queue="workflow_runs"\} 0/);
    expect(res.text).toMatch(/database_size_bytes [1-9]\d*/);
    await t.app.close();
  });

  it('/healthz checks the database: 503 when it does not answer', async () => {
    const t = await appWithLog();
    const ok = await call(t.app, 'GET', '/healthz');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'ok', database: 'ok' });
    await t.app.store.close();
    const down = await call(t.app, 'GET', '/healthz');
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'unavailable', database: 'unavailable' });
  });
});

describe('the real server process', () => {
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
    removeDir(server?.dataDir);
  });

  it('writes only JSON lines to stdout and the generated admin password only to an owner-only file', async () => {
    server = await startServer({ env: { ADMIN_EMAIL: '', ADMIN_PASSWORD: '' } });
    const file = path.join(server.dataDir, INITIAL_PASSWORD_FILE);
    const password = fs.readFileSync(file, 'utf8').trim();
    expect(password.length).toBeGreaterThanOrEqual(16);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const login = await fetch(`${server.url}/api/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@localhost', password }),
    });
    expect(login.status).toBe(200);
    await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'proc-health-1' } });
    await new Promise((r) => setTimeout(r, 300));
    const lines = server.stdout().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(2);
    const parsed = lines.map((l) => JSON.parse(l));
    expect(server.stdout()).not.toContain(password);
    expect(parsed.find((l) => l.password_file)).toMatchObject({ email: 'admin@localhost', password_file: file });
    expect(parsed.find((l) => l.request_id === 'proc-health-1')).toMatchObject({ route: '/healthz', status: 200, method: 'GET' });
  }, 60_000);
});
