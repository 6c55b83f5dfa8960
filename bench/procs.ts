// Child processes of the bench (the real service, the baseline server): spawn, wait until healthy, and always kill.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { processCpuSeconds } from './http-load.js';

export interface Child {
  name: string;
  proc: ChildProcess;
  logFile: string;
  port: number;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
}

const children = new Set<Child>();

/** A port that was free a moment ago (the OS picks it); the tiny race with other programs is acceptable for a bench. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts `node --import tsx <script>` in `cwd`; output goes to a log file so a failure can show its tail. */
export async function start(name: string, opts: { cwd: string; script: string; env: Record<string, string>; logDir: string; nodeArgs?: string[] }): Promise<Child> {
  const port = await freePort();
  const logFile = path.join(opts.logDir, `${name}.log`);
  const out = fs.openSync(logFile, 'a');
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', opts.script], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child: Child = { name, proc, logFile, port, exited };
  children.add(child);
  exited.then(() => children.delete(child));
  return child;
}

export function logTail(c: Child, lines = 30): string {
  try {
    return fs.readFileSync(c.logFile, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Polls GET /healthz until 200; fails early if the process dies, with its log. */
export async function waitHealthy(c: Child, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  c.exited.then(() => (dead = true));
  while (Date.now() < deadline) {
    if (dead) throw new Error(`${c.name} exited during start-up:\n${logTail(c)}`);
    try {
      const res = await fetch(`http://127.0.0.1:${c.port}/healthz`);
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${c.name} not healthy after ${timeoutMs} ms:\n${logTail(c)}`);
}

/** SIGTERM, then SIGKILL after a grace period (the service's own shutdown waits up to 5 s for open sockets). */
export async function stop(c: Child, graceMs = 8000): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  c.proc.kill('SIGTERM');
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), graceMs);
  await c.exited;
  clearTimeout(timer);
}

/** Last resort on any way out of the bench: synchronous, so it also works from an 'exit' handler. */
export function killAll() {
  for (const c of children) {
    if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  }
}

let installed = false;
export function installExitHandlers() {
  if (installed) return;
  installed = true;
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  }
}

/**
 * Waits until the process stops using the CPU on its own (e.g. a background search indexer catching up after a
 * bulk write), so the next workload measures requests, not leftover work. Returns the seconds it stayed busy
 * (up to the start of the first idle window); 0 when /proc is unavailable.
 */
export async function waitIdle(c: Child, opts: { windowMs?: number; idleCores?: number; maxSeconds?: number } = {}): Promise<number> {
  const windowMs = opts.windowMs ?? 1000;
  const idle = opts.idleCores ?? 0.05;
  const started = performance.now();
  const pid = c.proc.pid;
  if (!pid || processCpuSeconds(pid) === null) return 0;
  for (;;) {
    const from = performance.now();
    const cpu0 = processCpuSeconds(pid);
    await new Promise((r) => setTimeout(r, windowMs));
    const cpu1 = processCpuSeconds(pid);
    if (cpu0 === null || cpu1 === null) return (from - started) / 1000;
    if ((cpu1 - cpu0) / ((performance.now() - from) / 1000) < idle) return (from - started) / 1000;
    if ((performance.now() - started) / 1000 > (opts.maxSeconds ?? 900)) throw new Error(`${c.name} still busy after ${opts.maxSeconds ?? 900} s without requests`);
  }
}

/** Cores a freshly started process uses over `ms` with no requests (its floor, e.g. a profiler's sampling). */
export async function idleUse(c: Child, ms = 1500): Promise<number> {
  const pid = c.proc.pid;
  const cpu0 = pid ? processCpuSeconds(pid) : null;
  const from = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const cpu1 = pid ? processCpuSeconds(pid) : null;
  return cpu0 === null || cpu1 === null ? 0 : Math.max(0, (cpu1 - cpu0) / ((performance.now() - from) / 1000));
}

/**
 * Waits until the process's log holds `count` lines matching `pattern` (e.g. each node:cluster worker's "listening"),
 * so no load starts while some workers cannot take connections yet.
 */
export async function waitLogged(c: Child, pattern: RegExp, count: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let text = '';
    try {
      text = fs.readFileSync(c.logFile, 'utf8');
    } catch {
      /* not written yet */
    }
    if (text.split('\n').filter((l) => pattern.test(l)).length >= count) return;
    if (c.proc.exitCode !== null) throw new Error(`${c.name} exited during start-up:\n${logTail(c)}`);
    if (Date.now() > deadline) throw new Error(`${c.name}: ${count} lines matching ${pattern} not logged in ${timeoutMs} ms:\n${logTail(c)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
