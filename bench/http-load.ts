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
  /** Measures the server's CPU instead of `pid` alone (e.g. a process and its node:cluster workers). */
  serverCpu?: CpuMeter;
  /** Measures the database server's CPU during a run (PostgreSQL on this machine), reported beside the server's. */
  dbCpu?: CpuMeter;
}

/** Starts measuring CPU; the function it returns gives the CPU seconds used since (null where unknown). */
export type CpuMeter = () => () => number | null;

/** CPU seconds of every process on the machine, by pid, with each one's parent (Linux /proc only; empty elsewhere). */
function processTable(): Map<number, { ppid: number; cpu: number }> {
  const out = new Map<number, { ppid: number; cpu: number }>();
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const d of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(d), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / 100 });
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** CPU seconds of `root` and all its descendants, by pid. */
function treeCpu(root: number): Map<number, number> {
  const all = processTable();
  const out = new Map<number, number>();
  const children = new Map<number, number[]>();
  for (const [pid, p] of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const walk = (pid: number) => {
    const p = all.get(pid);
    if (!p) return;
    out.set(pid, p.cpu);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/**
 * A meter of a process tree (a node:cluster primary and its workers, a postmaster and its backends): per process, the
 * CPU used since the start, counting processes born meanwhile in full (those that exited meanwhile are lost).
 */
export function treeMeter(root: number | (() => number | null)): CpuMeter {
  return () => {
    const pid = typeof root === 'number' ? root : root();
    if (!pid) return () => null;
    const before = treeCpu(pid);
    if (!before.size) return () => null;
    return () => {
      let sum = 0;
      for (const [p, cpu] of treeCpu(pid)) sum += cpu - (before.get(p) ?? 0);
      return sum;
    };
  };
}

/** Busy CPU seconds of the whole machine so far, all cores (Linux /proc/stat); null where unavailable. */
export function machineBusySeconds(): number | null {
  try {
    const [, ...f] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal: all but idle and iowait are work.
    return (f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0)) / 100;
  } catch {
    return null;
  }
}

/** A meter of one process. */
function pidMeter(pid: number | undefined): ReturnType<CpuMeter> {
  const cpu0 = pid ? processCpuSeconds(pid) : null;
  return () => {
    const cpu1 = pid && cpu0 !== null ? processCpuSeconds(pid) : null;
    return cpu0 === null || cpu1 === null ? null : cpu1 - cpu0;
  };
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
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
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
  /** The database server's CPU (PostgreSQL), when the target measures it. */
  dbCores?: number | null;
  /**
   * CPU the rest of the machine used meanwhile: the machine's busy cores less the ones above, i.e. other programs (a
   * test run beside the bench) and kernel work no process is charged with.
   */
  otherCores?: number | null;
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
  const serverCpu = t.serverCpu ? t.serverCpu() : pidMeter(t.pid);
  const dbCpu = t.dbCpu?.();
  const clientCpu0 = process.cpuUsage();
  const machine0 = machineBusySeconds();
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const stats = summarize(latencies, (performance.now() - started) / 1000, bytes);
  const serverSeconds = serverCpu();
  const dbSeconds = dbCpu?.();
  const client = process.cpuUsage(clientCpu0);
  stats.serverCores = serverSeconds === null ? null : serverSeconds / stats.seconds;
  if (dbCpu) stats.dbCores = dbSeconds == null ? null : dbSeconds / stats.seconds;
  stats.clientCores = (client.user + client.system) / 1e6 / stats.seconds;
  const machine1 = machineBusySeconds();
  if (machine0 !== null && machine1 !== null && stats.serverCores !== null) {
    stats.otherCores = Math.max(0, (machine1 - machine0) / stats.seconds - stats.serverCores - stats.clientCores - (stats.dbCores ?? 0));
  }
  return stats;
}
