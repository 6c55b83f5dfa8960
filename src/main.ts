// Starts the server: the only module with side effects (reads the environment, opens the database, listens).
import http from 'node:http';
import { createServerAdapter } from '@whatwg-node/server';
import { createApp } from './app.js';
import { readConfig } from './config.js';
import { version } from './version.js';

const config = readConfig(process.env, version);
const app = await createApp(config);
if (app.firstAdmin) {
  console.log(`Created the system administrator ${app.firstAdmin.email}` + (app.firstAdmin.password ? ` with password ${app.firstAdmin.password} (shown once)` : ''));
}

console.log(app.sandbox.isolation === 'full'
  ? 'Script plugins run under OS isolation (bubblewrap).'
  : `WARNING: script plugins run WITHOUT OS isolation (${app.sandbox.reason}); only the in-Python layers protect the host. Install bubblewrap.`);

const server = http.createServer(createServerAdapter((request: Request) => app.fetch(request)));
server.keepAliveTimeout = 65_000;
server.listen(config.port, config.host, () => {
  console.log(`table-service ${config.version} listening on ${config.publicUrl} (data in ${config.dataDir})`);
});

function shutdown() {
  server.close(() => {
    void app.close().finally(() => process.exit(0));
  });
  setTimeout(() => process.exit(0), 5000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
