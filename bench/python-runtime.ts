// Bench of the sandboxed Python runtime: base.* round trips (script -> host -> reply) and trivial script runs incl. sandbox start-up.
// Standalone: `npx tsx bench/python-runtime.ts` prints median/p95 beside the targets (exit code 1 when one is missed).
import { performance } from 'node:perf_hooks';
import { runScript, sandboxStatus, type ScriptRequest } from '../plugins-runtime/python/runner.js';

const ROUND_TRIPS = 2000;
const WARM_TRIPS = 200;
const TRIVIAL_RUNS = 30;
const TARGET_TRIP_MS = 1;
const TARGET_RUN_MS = 250;

interface Figure { label: string; median: number; p95: number; target?: number; n: number }

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function request(source: string, isolation: ScriptRequest['isolation']): ScriptRequest {
  return {
    files: new Map([['main.py', Buffer.from(source)]]), entry: 'main.py', timeoutMs: 60_000,
    context: { plugin_id: 'bench', base_id: 'b1' }, config: {}, request: null, isolation,
    // A cheap answer of realistic shape: what is measured is the runtime's share, not a database.
    call: async (_method, args) => ({ id: args[0], values: { Name: 'Ada', Age: 36, Tags: ['a', 'b'] } }),
  };
}

/** Per-call latency as the script sees it, timed inside the sandbox around each base call. */
async function roundTrips(isolation: ScriptRequest['isolation']): Promise<{ figure: Omit<Figure, 'label' | 'target'>; hostMs: number }> {
  const started = performance.now();
  const outcome = await runScript(request(`
import time
for i in range(${WARM_TRIPS}):
    base.get_record('rec%d' % i)
times = []
for i in range(${ROUND_TRIPS}):
    t = time.perf_counter()
    base.get_record('rec%d' % i)
    times.append((time.perf_counter() - t) * 1000)
set_result(times)
`, isolation));
  const hostMs = performance.now() - started;
  if (outcome.status !== 'completed') throw new Error(`round-trip script failed: ${outcome.error}`);
  const times = (outcome.result as number[]).slice().sort((a, b) => a - b);
  return { figure: { median: quantile(times, 0.5), p95: quantile(times, 0.95), n: times.length }, hostMs };
}

/** Wall time of `set_result(1)` runs from runScript() to the outcome: spawn, sandbox, interpreter, harness, result. */
async function trivialRuns(isolation: ScriptRequest['isolation']): Promise<Omit<Figure, 'label' | 'target'>> {
  for (let i = 0; i < 3; i++) await runScript(request('set_result(1)', isolation));   // warm the page cache
  const times: number[] = [];
  for (let i = 0; i < TRIVIAL_RUNS; i++) {
    const t = performance.now();
    const outcome = await runScript(request('set_result(1)', isolation));
    times.push(performance.now() - t);
    if (outcome.status !== 'completed' || outcome.result !== 1) throw new Error(`trivial run failed: ${outcome.error}`);
  }
  times.sort((a, b) => a - b);
  return { median: quantile(times, 0.5), p95: quantile(times, 0.95), n: times.length };
}

async function main(): Promise<void> {
  const status = sandboxStatus();
  console.log(`sandbox isolation: ${status.isolation}${status.reason ? ` (${status.reason})` : ''}`);
  const figures: Figure[] = [];
  const trips = await roundTrips('auto');
  figures.push({ label: `data round trip (${ROUND_TRIPS} in one script)`, ...trips.figure, target: TARGET_TRIP_MS });
  figures.push({ label: `trivial run set_result(1) (${TRIVIAL_RUNS} runs)`, ...(await trivialRuns('auto')), target: TARGET_RUN_MS });
  if (status.isolation === 'full') {
    // For comparison: the same without bubblewrap (in-Python layers only). Informational.
    figures.push({ label: 'trivial run, bubblewrap disabled (info)', ...(await trivialRuns('reduced')) });
  }

  const rows = figures.map((f) => [
    f.label, `${f.median.toFixed(3)} ms`, `${f.p95.toFixed(3)} ms`, f.target === undefined ? '-' : `<= ${f.target} ms median`,
    f.target === undefined ? 'info' : f.median <= f.target ? 'PASS' : 'FAIL',
  ]);
  const head = ['measure', 'median', 'p95', 'target', 'result'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  console.log(`(round-trip script: ${trips.hostMs.toFixed(0)} ms wall for ${WARM_TRIPS + ROUND_TRIPS} calls incl. start-up)`);
  if (figures.some((f) => f.target !== undefined && f.median > f.target)) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
