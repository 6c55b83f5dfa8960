// Bench S: how long a start of the built server takes (`node dist/server.mjs`, what `npm start` runs), from spawn to the
// first 200 from /healthz, on an existing data directory; beside the same start from the sources through tsx.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './procs.js';
import type { Row } from './report.js';

async function timeStart(cwd: string, args: string[], dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const proc = spawn(process.execPath, args, {
    cwd, env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, NODE_ENV: 'production', ADMIN_EMAIL: 'bench@localhost', ADMIN_PASSWORD: 'bench-password' },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`the server exited with ${proc.exitCode} before it was healthy`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false);
      if (ok) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error('the server was not healthy within 60 s');
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    proc.kill('SIGKILL');
    await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r(null) : proc.once('exit', r)));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median of `runs` starts of each; the first start of each (migrations, first administrator) is not counted. */
export async function startTime(root: string, rows: Row[], runs = 5): Promise<void> {
  const bundle = path.join(root, 'dist', 'server.mjs');
  if (!fs.existsSync(bundle)) throw new Error('dist/server.mjs is missing: run `npm run build` first');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-start-'));
  try {
    const built = ['--enable-source-maps', bundle];
    const sources = ['--import', 'tsx', path.join(root, 'src', 'main.ts')];
    await timeStart(root, built, dataDir);
    const b: number[] = [];
    const s: number[] = [];
    for (let i = 0; i < runs; i++) {
      b.push(await timeStart(root, built, dataDir));
      s.push(await timeStart(root, sources, dataDir));
    }
    const service = median(b);
    rows.push({
      id: 'S', workload: 'start of the built server to first healthy answer (median of 5)', unit: 'ms', service,
      baseline: median(s), baselineLabel: 'from sources via tsx', ratio: service / median(s), target: '<= 3,000 ms', pass: service <= 3000,
      details: { built: b, sources: s },
    });
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
