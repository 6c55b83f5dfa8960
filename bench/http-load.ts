// Load generator: keep-alive node:http requests, closed-loop workers bounded by count and time, latency statistics.
// Written here rather than taken from a package so the bench adds no dependency; bodies are not parsed during
// measured runs (only the status is checked) so the client's CPU cost stays small next to the server's.
import fs from 'node:fs';
import http from 'node:http';

export interface Target {
  name: string;
  base: string;
  agent: http.Agent;
  headers: Record<string, string>;
  /** The server's process id, to measure its CPU use during a run (Linux /proc only). */
  pid?: number;
}

/** CPU seconds a process has used so far, from /proc (utime + stime at the usual 100 ticks/s); null where unavailable. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

export interface Req {
  method: 'GET' | 'POST';
  path: string;
  /** Sent as application/json unless `headers` names another content-type. */
  body?: string;
  /** Per-request headers, over the target's (e.g. HTTP Basic on the token endpoint). */
  headers?: Record<string, string>;
}

export interface Res {
  status: number;
  body: Buffer;
  ms: number;
}

export function makeTarget(name: string, base: string, headers: Record<string, string> = {}, maxSockets = 16, pid?: number): Target {
  return { name, base, agent: new http.Agent({ keepAlive: true, maxSockets }), headers, pid };
}

export function send(t: Target, r: Req): Promise<Res> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers: Record<string, string | number> = { ...t.headers };
    if (r.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(r.body);
    }
    if (r.headers) Object.assign(headers, r.headers);
    const req = http.request(t.base + r.path, { method: r.method, agent: t.agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - started }));
      res.on('error', reject);
    });
    // A hung server must fail the run, not stall it forever.
    req.setTimeout(120_000, () => req.destroy(new Error(`${t.name} ${r.method} ${r.path.slice(0, 120)}: no answer in 120 s`)));
    req.on('error', reject);
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

/** Sends one request and parses its JSON answer; throws with the answer on a non-2xx status. */
export async function sendJson(t: Target, r: Req): Promise<any> {
  const res = await send(t, r);
  const text = res.body.toString('utf8');
  if (res.status < 200 || res.status >= 300) throw new Error(`${t.name} ${r.method} ${r.path.slice(0, 120)} → ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

export interface Stats {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
  bytes: number;
  /**
   * CPU used during the run, in cores (1 = one core busy all the time): the server near 1 and the client well below
   * means the figure measures the server, not the load generator.
   */
  serverCores?: number | null;
  clientCores?: number;
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function summarize(latencies: number[], seconds: number, bytes: number): Stats {
  const s = [...latencies].sort((a, b) => a - b);
  return {
    requests: s.length,
    seconds,
    rps: s.length / seconds,
    p50: quantile(s, 0.5),
    p90: quantile(s, 0.9),
    p95: quantile(s, 0.95),
    p99: quantile(s, 0.99),
    mean: s.reduce((a, b) => a + b, 0) / (s.length || 1),
    max: s[s.length - 1] ?? NaN,
    bytes,
  };
}

/**
 * Runs `concurrency` closed-loop workers until `maxRequests` were sent or `seconds` passed (whichever first; at least
 * `minRequests` are always sent). `next(i)` builds request number i. Any non-2xx answer aborts the run: a benchmark
 * of error pages would measure the wrong thing.
 */
export async function load(t: Target, opts: {
  concurrency: number;
  seconds: number;
  maxRequests: number;
  minRequests?: number;
  next: (i: number) => Req;
  /** Called with each answer, e.g. to count records; must be cheap. */
  onResponse?: (res: Res, i: number) => void;
}): Promise<Stats> {
  const latencies: number[] = [];
  let issued = 0;
  let bytes = 0;
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const min = opts.minRequests ?? 1;
  async function worker() {
    for (;;) {
      if (issued >= opts.maxRequests) return;
      if (issued >= min && performance.now() >= deadline) return;
      const i = issued++;
      const r = opts.next(i);
      const res = await send(t, r);
      if (res.status < 200 || res.status >= 300) {
        throw new Error(`${t.name} ${r.method} ${r.path.slice(0, 120)} → ${res.status}: ${res.body.toString('utf8').slice(0, 500)}`);
      }
      latencies.push(res.ms);
      bytes += res.body.length;
      opts.onResponse?.(res, i);
    }
  }
  const serverCpu0 = t.pid ? processCpuSeconds(t.pid) : null;
  const clientCpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const stats = summarize(latencies, (performance.now() - started) / 1000, bytes);
  const serverCpu1 = t.pid ? processCpuSeconds(t.pid) : null;
  const client = process.cpuUsage(clientCpu0);
  stats.serverCores = serverCpu0 !== null && serverCpu1 !== null ? (serverCpu1 - serverCpu0) / stats.seconds : null;
  stats.clientCores = (client.user + client.system) / 1e6 / stats.seconds;
  return stats;
}
