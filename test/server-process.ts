// Test helper: runs the real server (`node --import tsx src/main.ts`) as a child process on a free port, and talks to it over HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseEnvFor } from './database.js';
import { send, type RequestOptions, type TestResponse } from './http.js';

/** The repository root: the server's working directory. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export const SERVER_ADMIN = { email: 'admin@test.local', password: 'admin-password' };

export interface ServerProcess {
  url: string;
  port: number;
  dataDir: string;
  process: ChildProcess;
  /** Everything the server wrote to stdout and stderr so far. */
  output(): string;
  /** What the server wrote to stdout alone (its JSON log lines). */
  stdout(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (SIGKILL unless told) and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Graceful stop: SIGTERM, then SIGKILL if the process is still there after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  /** The data directory; a new temporary one when absent (the caller removes it, e.g. with `removeDir`). */
  dataDir?: string;
  admin?: { email: string; password: string };
  /** Extra environment for the server. */
  env?: Record<string, string>;
  /** How long to wait for `GET /healthz` to answer 200. */
  timeoutMs?: number;
}

const running = new Set<ServerProcess>();

// A test runner that exits without running its hooks must not leave servers behind.
process.once('exit', () => {
  for (const s of running) if (s.process.exitCode === null && s.process.signalCode === null) s.process.kill('SIGKILL');
});

export function tempDir(prefix = 'ts-proc-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string | undefined) {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

/** A port that was free a moment ago: the OS picks it for a listener on port 0, which is then closed. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the server and waits until it is healthy. Retries on another port if the chosen one was taken meanwhile. */
export async function startServer(opts: StartOptions = {}): Promise<ServerProcess> {
  const dataDir = opts.dataDir ?? tempDir();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(dataDir, opts);
    } catch (error) {
      if (attempt < 3 && /EADDRINUSE/.test(String((error as Error).message))) continue;
      throw error;
    }
  }
}

async function startOnce(dataDir: string, opts: StartOptions): Promise<ServerProcess> {
  const port = await freePort();
  const admin = opts.admin ?? SERVER_ADMIN;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PUBLIC_URL;
  Object.assign(env, {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    ...(await databaseEnvFor(dataDir)),
    ...opts.env,
  });
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    out += s;
    stdout += s;
  });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  let gone = false;
  void exited.then(() => (gone = true));
  child.once('error', (e) => (out += `\n[spawn error] ${e.message}`));

  const url = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    url,
    port,
    dataDir,
    process: child,
    output: () => out,
    stdout: () => stdout,
    exited,
    async kill(signal = 'SIGKILL') {
      if (!gone) child.kill(signal);
      const r = await exited;
      running.delete(server);
      return r;
    },
    async stop(graceMs = 5000) {
      if (!gone) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          if (!gone) child.kill('SIGKILL');
        }, graceMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(server);
    },
  };
  running.add(server);

  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  while (true) {
    if (gone) {
      running.delete(server);
      const r = await exited;
      throw new Error(`server exited before it was healthy (code ${r.code}, signal ${r.signal}):\n${out}`);
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) {
        await res.arrayBuffer();
        return server;
      }
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await server.kill();
      throw new Error(`server did not answer GET /healthz within ${opts.timeoutMs ?? 30_000} ms:\n${out}`);
    }
    await sleep(100);
  }
}

/** Stops every server this module started that is still running. For afterAll/afterEach hooks. */
export async function stopAllServers() {
  await Promise.all([...running].map((s) => s.kill()));
}

export type ApiResponse = TestResponse;

/** One JSON request to a real server; `body` is sent as JSON, the answer parsed as JSON when it is JSON. */
export function api(baseUrl: string, method: string, urlPath: string, opts: RequestOptions = {}): Promise<ApiResponse> {
  return send(fetch, method, `${baseUrl}${urlPath}`, { timeoutMs: 20_000, ...opts });
}

/** Logs in with `POST /api/auth/login` and returns the token. */
export async function login(baseUrl: string, email = SERVER_ADMIN.email, password = SERVER_ADMIN.password): Promise<string> {
  const res = await api(baseUrl, 'POST', '/api/auth/login', { body: { email, password } });
  if (res.status !== 200) throw new Error(`login failed (${res.status}): ${JSON.stringify(res.body)}`);
  return res.body.data.token as string;
}

/** A client bound to one server and token: `client.call('GET', '/api/v1/...')`. */
export function client(baseUrl: string, token: string) {
  return {
    token,
    call: (method: string, urlPath: string, body?: unknown) => api(baseUrl, method, urlPath, { token, body }),
    /** Like `call`, but throws unless the status is `expected`; returns `body.data`. */
    async data(method: string, urlPath: string, body?: unknown, expected: number | number[] = [200, 201]): Promise<any> {
      const res = await api(baseUrl, method, urlPath, { token, body });
      const ok = Array.isArray(expected) ? expected.includes(res.status) : res.status === expected;
      if (!ok) throw new Error(`${method} ${urlPath} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
  };
}

export type Client = ReturnType<typeof client>;

/** Every record of a table, read page by page (1000 a page) through `GET /api/v1/tables/{id}/records`. */
export async function listAllRecords(c: Client, tableId: string): Promise<Array<{ id: string; fields: Record<string, unknown> }>> {
  const out: Array<{ id: string; fields: Record<string, unknown> }> = [];
  for (let page = 1; ; page++) {
    const data = await c.data('GET', `/api/v1/tables/${tableId}/records?page=${page}&page_size=1000`, undefined, 200);
    out.push(...data.items);
    if (data.items.length < 1000) return out;
  }
}

export interface BatchWriter {
  /** Fields of every record whose batch the server acknowledged, by record id. */
  acked: Map<string, Record<string, unknown>>;
  /** Acknowledged batches. */
  batches(): number;
  /** Answers other than 200 while the server was up: each is a failure of the service. */
  errors: string[];
  /** Requests that failed without an answer (connection refused or reset): expected once the server is killed. */
  connectionErrors: string[];
  /** Resolves once at least `n` records are acknowledged; rejects after `timeoutMs` or on an error. */
  waitForAcked(n: number, timeoutMs?: number): Promise<void>;
  /** Stops issuing batches and waits for the requests in flight to end. */
  stop(): Promise<void>;
}

/**
 * Keeps writing batches of `batchSize` records (`POST .../records/batch`, action create) from `concurrency` loops,
 * each loop waiting for its previous batch. A loop ends at the first request that fails without an answer.
 * Record fields: N, a number unique to the record; S, "w<loop>-b<batch>-r<index>".
 */
export function startBatchWriter(c: Client, tableId: string, opts: { concurrency?: number; batchSize?: number } = {}): BatchWriter {
  const batchSize = opts.batchSize ?? 100;
  const acked = new Map<string, Record<string, unknown>>();
  const errors: string[] = [];
  const connectionErrors: string[] = [];
  let batches = 0;
  let stopped = false;

  async function loop(w: number) {
    for (let b = 0; !stopped; b++) {
      const fields = Array.from({ length: batchSize }, (_, i) => ({ N: w * 1_000_000 + b * batchSize + i, S: `w${w}-b${b}-r${i}` }));
      let res: ApiResponse;
      try {
        res = await c.call('POST', `/api/v1/tables/${tableId}/records/batch`, { action: 'create', records: fields.map((f) => ({ fields: f })) });
      } catch (error) {
        connectionErrors.push(String((error as Error).cause ?? error));
        return;
      }
      if (res.status !== 200 || !Array.isArray(res.body?.data?.items) || res.body.data.items.length !== batchSize) {
        errors.push(`${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
        continue;
      }
      res.body.data.items.forEach((item: { id: string }, i: number) => acked.set(item.id, fields[i]));
      batches++;
    }
  }
  const loops = Array.from({ length: opts.concurrency ?? 3 }, (_, w) => loop(w));

  return {
    acked,
    batches: () => batches,
    errors,
    connectionErrors,
    async waitForAcked(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (acked.size < n) {
        if (errors.length) throw new Error(`the writer got errors: ${errors[0]}`);
        if (connectionErrors.length) throw new Error(`the writer lost the server: ${connectionErrors[0]}`);
        if (Date.now() > deadline) throw new Error(`only ${acked.size} of ${n} records acknowledged after ${timeoutMs} ms`);
        await sleep(20);
      }
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
