// Reads the environment once into a typed configuration object; nothing else reads process.env.
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  adminEmail?: string;
  adminPassword?: string;
  /** Lifetime of a user token in seconds. */
  userTokenTtl: number;
  /** SQLite `synchronous` setting: NORMAL survives process crashes, FULL also power loss. */
  sqliteSynchronous: 'NORMAL' | 'FULL';
  version: string;
  /** Outbound HTTP (workflow http_request, plugin proxy): `host:port` pairs exempt from the private-address rule (tests only). */
  proxyAllowPrivate: string[];
  proxyTimeoutMs: number;
  proxyMaxBytes: number;
  /** Plugin proxy requests per plugin in any 60 s window. */
  proxyRatePerMinute: number;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env, version = '0.0.0'): Config {
  const port = Number(env.PORT ?? 8080);
  const host = env.HOST ?? '127.0.0.1';
  return {
    port,
    host,
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    publicUrl: (env.PUBLIC_URL ?? `http://${host}:${port}`).replace(/\/$/, ''),
    adminEmail: env.ADMIN_EMAIL || undefined,
    adminPassword: env.ADMIN_PASSWORD || undefined,
    userTokenTtl: Number(env.USER_TOKEN_TTL ?? 86400),
    sqliteSynchronous: env.SQLITE_SYNCHRONOUS === 'FULL' ? 'FULL' : 'NORMAL',
    version,
    proxyAllowPrivate: (env.PLUGIN_PROXY_ALLOW_PRIVATE ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    proxyTimeoutMs: Number(env.PLUGIN_PROXY_TIMEOUT_MS ?? 10_000),
    proxyMaxBytes: Number(env.PLUGIN_PROXY_MAX_BYTES ?? 5 * 1024 * 1024),
    proxyRatePerMinute: Number(env.PLUGIN_PROXY_RATE_PER_MINUTE ?? 60),
  };
}
