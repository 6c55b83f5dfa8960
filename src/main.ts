// Starts the server: the only module with side effects (reads the environment, opens the database, listens). With
// WORKERS=N it starts N processes (node:cluster) that share the port; each is a whole server over the one database.
import cluster from 'node:cluster';
import http from 'node:http';
import path from 'node:path';
import { createServerAdapter } from '@whatwg-node/server';
import { pino } from 'pino';
import { createApp, INITIAL_PASSWORD_FILE } from './app.js';
import { ConfigError, readConfig, VARIABLES, withDotEnv, type Config } from './config.js';
import { createLogger } from './log.js';
import { version } from './version.js';

const USAGE = `Usage: npm start   (or: tsx src/main.ts)

Serves the table service (API, GraphQL, web app) on HOST:PORT. Configuration comes from the environment and
from a .env file in the working directory for variables the environment does not set:
  ${VARIABLES.join(', ')}
See the README's "Configuration" section for what each one does. Logs are JSON lines on stdout.`;

if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  console.log(USAGE);
  process.exit(0);
}

let config: Config;
try {
  config = readConfig(withDotEnv(process.env), version);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  // One line naming the variable, then stop (contract 10).
  process.stderr.write(`table-service: configuration error: ${error.message}\n`);
  process.exit(1);
}

const log = createLogger(config.logLevel, pino.destination({ dest: 1, sync: false }));
if (config.workers > 1 && cluster.isPrimary) {
  superviseWorkers(config.workers);
} else {
  await serve();
}

/**
 * The primary of WORKERS=N: forks the workers (the kernel hands each connection to one of them), forks a new one when
 * one dies unasked (at most once a second), and on SIGTERM/SIGINT stops them all, then itself.
 */
function superviseWorkers(n: number) {
  let stopping = false;
  let lastFork = 0;
  const fork = () => {
    lastFork = Date.now();
    cluster.fork();
  };
  for (let i = 0; i < n; i++) fork();
  log.info({ workers: n }, 'started worker processes');
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) log.flush(() => process.exit(0));
      return;
    }
    log.error({ pid: worker.process.pid, code, signal }, 'a worker process died; starting another');
    setTimeout(fork, Math.max(0, 1000 - (Date.now() - lastFork)));
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function serve() {
  const app = await createApp(config, { log });
  if (app.firstAdmin) {
    log.info(
      { email: app.firstAdmin.email, ...(app.firstAdmin.password ? { password_file: path.join(config.dataDir, INITIAL_PASSWORD_FILE) } : {}) },
      app.firstAdmin.password ? 'created the system administrator; its generated password is in password_file' : 'created the system administrator',
    );
  }
  if (app.sandbox.isolation === 'full') log.info('script plugins run under OS isolation (bubblewrap)');
  else log.warn({ reason: app.sandbox.reason }, 'script plugins run WITHOUT OS isolation; only the in-Python layers protect the host: install bubblewrap');

  const server = http.createServer(createServerAdapter<{ req: http.IncomingMessage }>((request, { req }) => app.fetch(request, req.socket.remoteAddress)));
  server.keepAliveTimeout = 65_000;
  server.on('error', (error) => {
    log.error({ err: error }, 'cannot listen');
    log.flush(() => process.exit(1));
  });
  server.listen(config.port, config.host, () => {
    log.info({ version: config.version, url: config.publicUrl, data_dir: config.dataDir }, 'listening');
  });

  function shutdown() {
    log.info('shutting down');
    server.close(() => {
      void app.close().finally(() => log.flush(() => process.exit(0)));
    });
    setTimeout(() => process.exit(0), 5000).unref();
  }
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
