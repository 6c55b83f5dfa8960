// Summarises the service's V8 CPU profile into its hottest functions and packages, per workload.
// (BENCH_PROFILE=1 runs the service under `node --cpu-prof`), so a missed target can be traced to code without DevTools.
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface Hot {
  fn: string;
  where: string;
  selfMs: number;
  share: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export function readProfile(file: string): CpuProfile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
}

/** Now on the clock V8 stamps profile samples with (CLOCK_MONOTONIC in microseconds, shared by all processes on Linux). */
export const profileClock = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time per function; with `windows` ([from, to] on profileClock) only the samples taken in them, so one profile
 * of the whole run can be cut into workloads. Idle time is left out: it is the server waiting for requests.
 */
export function summarizeProfile(prof: CpuProfile, top = 25, root = process.cwd(), windows?: Array<[number, number]>): { totalMs: number; hot: Hot[]; byPackage: Hot[] } {
  // Self time per node from the sample timeline (more exact than hitCount x mean interval).
  const selfUs = new Map<number, number>();
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    if (windows && !windows.some(([from, to]) => t >= from && t <= to)) continue;
    selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i + 1] ?? 0));
  }
  const byFn = new Map<string, Hot>();
  const byPkg = new Map<string, Hot>();
  let total = 0;
  for (const n of prof.nodes) {
    const us = selfUs.get(n.id) ?? 0;
    if (!us || n.callFrame.functionName === '(idle)') continue;
    total += us;
    const url = n.callFrame.url.replace(/^file:\/\//, '');
    const rel = url.startsWith(root) ? path.relative(root, url) : url;
    const where = rel ? `${rel}:${n.callFrame.lineNumber + 1}` : '(native)';
    const fn = n.callFrame.functionName || '(anonymous)';
    const key = `${fn} ${where}`;
    const h = byFn.get(key) ?? { fn, where, selfMs: 0, share: 0 };
    h.selfMs += us / 1000;
    byFn.set(key, h);
    // Group by package (node_modules/<pkg>) or by our own top-level folder, to see which layer costs what.
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(rel);
    const pkg = m ? m[1] : rel ? rel.split('/')[0] : fn.startsWith('(') ? fn : '(native)';
    const p = byPkg.get(pkg) ?? { fn: pkg, where: '', selfMs: 0, share: 0 };
    p.selfMs += us / 1000;
    byPkg.set(pkg, p);
  }
  const finish = (xs: Iterable<Hot>) => [...xs].sort((a, b) => b.selfMs - a.selfMs).slice(0, top).map((h) => ({ ...h, share: h.selfMs / (total / 1000) }));
  return { totalMs: total / 1000, hot: finish(byFn.values()), byPackage: finish(byPkg.values()) };
}

export function printProfile(s: ReturnType<typeof summarizeProfile>, title: string): string {
  const lines = [`${title}: ${(s.totalMs / 1000).toFixed(1)} s of CPU sampled`, 'self time by package/folder:'];
  for (const h of s.byPackage) lines.push(`  ${(h.share * 100).toFixed(1).padStart(5)}%  ${h.selfMs.toFixed(0).padStart(7)} ms  ${h.fn}`);
  lines.push('top functions by self time:');
  for (const h of s.hot) lines.push(`  ${(h.share * 100).toFixed(1).padStart(5)}%  ${h.selfMs.toFixed(0).padStart(7)} ms  ${h.fn}  ${h.where}`);
  return lines.join('\n');
}
