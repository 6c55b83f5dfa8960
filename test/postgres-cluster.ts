// A throwaway PostgreSQL cluster for the test run (and the benchmark): Debian's binaries, a temporary directory, a free
// port, trust authentication on 127.0.0.1; run as the `postgres` user when we are root (the server refuses root).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface Cluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  stop(): void;
}

/** The directory of PostgreSQL's server binaries (the newest installed version 15 or later), or null. */
export function findPostgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs.readdirSync(root).map(Number).filter((v) => v >= 15).sort((a, b) => b - a);
  for (const v of versions) {
    const bin = path.join(root, String(v), 'bin');
    if (fs.existsSync(path.join(bin, 'pg_ctl'))) return bin;
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a cluster; settings favour speed over durability (fsync off), which is right for data thrown away. */
export async function startCluster(bin: string): Promise<Cluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ts-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) => {
    const argv = asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args;
    const r = spawnSync(asRoot ? 'runuser' : path.join(bin, tool), argv, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr || r.stdout || r.error?.message}`);
  };
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale', 'C.UTF-8']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400`;
  run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
