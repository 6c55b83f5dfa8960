// The end of a bench run: the table of figures, the engines side by side, the problems, the profiles of the service
// (BENCH_PROFILE), bench/results/latest.json, and the warning when other work competed for the CPU.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { log, windows } from './harness.js';
import { printProfile, readProfile, summarizeProfile } from './profile.js';
import { detailLines, engineLines, table, type Row } from './report.js';
import { PROFILE, RESULTS, SCALE, SERVICE_DIR } from './settings.js';

type Profile = ReturnType<typeof readProfile>;

/** The time a profile covers, on profileClock. */
function span(p: Profile): [number, number] {
  return [p.startTime, p.startTime + p.timeDeltas.reduce((a, b) => a + b, 0)];
}

/**
 * Prints each workload's hottest functions from the profile (of the several services a run starts, SQLite's and
 * PostgreSQL's) that was running during it; copies the profiles to bench/results/.
 */
function profiles(dirs: string[], problems: string[]): Record<string, ReturnType<typeof summarizeProfile>> {
  const out: Record<string, ReturnType<typeof summarizeProfile>> = {};
  const files = dirs.flatMap((d) => (fs.existsSync(d) ? fs.readdirSync(d).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(d, f)) : []));
  if (!files.length) {
    problems.push('no CPU profile was written by the service');
    return out;
  }
  fs.mkdirSync(RESULTS, { recursive: true });
  const profs = files.map((f, i) => {
    const name = i === 0 ? 'service.cpuprofile' : `service-${i + 1}.cpuprofile`;
    fs.copyFileSync(f, path.join(RESULTS, name));
    return { name, prof: readProfile(f) };
  });
  for (const [label, w] of windows) {
    const overlap = (p: Profile) => w.reduce((a, [from, to]) => a + Math.max(0, Math.min(to, span(p)[1]) - Math.max(from, span(p)[0])), 0);
    const best = profs.map((p) => ({ ...p, o: overlap(p.prof) })).sort((a, b) => b.o - a.o)[0];
    if (!best || best.o <= 0) continue;
    out[label] = summarizeProfile(best.prof, Number(process.env.BENCH_PROFILE_TOP ?? 15), SERVICE_DIR, w);
    log('');
    log(printProfile(out[label], `service profile, ${label}`));
  }
  log(`\n(whole-run profiles: ${profs.map((p) => `bench/results/${p.name}`).join(', ')}; open in Chrome DevTools)`);
  return out;
}

export interface RunSummary {
  rows: Row[];
  problems: string[];
  runStarted: number;
  loadBefore: number;
  setup: Record<string, unknown>;
  profileDirs: string[];
}

/** Prints and writes the results; true when every target was met and nothing went wrong. */
export function finish(run: RunSummary): boolean {
  const { rows, problems } = run;
  log('');
  log(table(rows));
  for (const line of detailLines(rows)) log(line);
  for (const line of engineLines(rows)) log(line);
  for (const p of problems) log(`PROBLEM: ${p}`);
  const profile = PROFILE ? profiles(run.profileDirs, problems) : undefined;

  fs.mkdirSync(RESULTS, { recursive: true });
  const out = {
    startedAt: new Date(run.runStarted).toISOString(),
    seconds: (Date.now() - run.runStarted) / 1000,
    scale: SCALE,
    loadAverage: { before: run.loadBefore, after: os.loadavg()[0] },
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, platform: `${os.platform()} ${os.release()}` },
    setup: run.setup,
    rows,
    problems,
    profile,
  };
  fs.writeFileSync(path.join(RESULTS, 'latest.json'), JSON.stringify(out, null, 2) + '\n');
  // The bench itself keeps about 1.3 cores busy (server + load generator); more than every core means someone else was too.
  if (os.loadavg()[0] > os.cpus().length) log(`WARNING: load average ${os.loadavg()[0].toFixed(2)} at the end: other work competed for the CPU during the run`);
  log(`\nresults: ${path.relative(process.cwd(), path.join(RESULTS, 'latest.json'))} (${out.seconds.toFixed(0)} s)`);
  return rows.every((r) => r.pass) && problems.length === 0;
}
