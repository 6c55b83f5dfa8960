// Reads the environment (and a `.env` file) once into a typed, validated configuration; nothing else reads process.env.
import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** A PostgreSQL URL to keep everything in PostgreSQL; without it, one SQLite file in `dataDir`. */
  databaseUrl?: string;
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
  /** Behind a reverse proxy: take the client's address from the last hop of X-Forwarded-For. */
  trustProxy: boolean;
  logLevel: LogLevel;
  /** Bearer token that opens `/metrics`; without it `/metrics` answers 404. */
  metricsToken?: string;
  /** Processes `npm start` runs on one port (more than one needs PostgreSQL). */
  workers: number;
  /** How long a workflow run stays its process's without renewal: after a crash, other processes fail it then. */
  workflowLeaseMs: number;
  /** Whether changes are written to the event log (on unless EVENT_LOG=off, which exists to measure its cost). */
  eventLog: boolean;
  /** How long the event log keeps events. */
  eventRetentionDays: number;
  /** How long deleted records, fields and tables stay in their base's trash. */
  trashRetentionDays: number;
  /** How long record events are kept for record history (longer than EVENT_RETENTION_DAYS keeps record events that long). */
  historyRetentionDays: number;
  /** Delays between a webhook delivery's attempts; one attempt more than there are delays, then it is failed. */
  webhookRetryScheduleMs: number[];
  /** How long a webhook receiver has to answer an attempt. */
  webhookTimeoutMs: number;
  /** The largest import file (contract section 15: 413 beyond). */
  importMaxBytes: number;
  /** The largest attachment upload (contract section 16: 413 beyond). */
  attachmentMaxBytes: number;
}

/** A variable with a bad value: the start stops with this one line. */
export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`${variable} ${problem}`);
  }
}

/** Every variable the service reads, with what it is for (the README lists the same). */
export const VARIABLES = [
  'PORT', 'HOST', 'DATA_DIR', 'PUBLIC_URL', 'DATABASE_URL', 'ADMIN_EMAIL', 'ADMIN_PASSWORD', 'USER_TOKEN_TTL', 'SQLITE_SYNCHRONOUS',
  'LOG_LEVEL', 'METRICS_TOKEN', 'TRUST_PROXY', 'PLUGIN_PROXY_ALLOW_PRIVATE', 'PLUGIN_PROXY_TIMEOUT_MS', 'PLUGIN_PROXY_MAX_BYTES',
  'PLUGIN_PROXY_RATE_PER_MINUTE', 'TABLE_SANDBOX_PYTHON', 'TABLE_SANDBOX_DISABLE_BWRAP', 'WORKERS', 'WORKFLOW_LEASE_SECONDS',
  'EVENT_LOG', 'EVENT_RETENTION_DAYS', 'TRASH_RETENTION_DAYS', 'HISTORY_RETENTION_DAYS', 'WEBHOOK_RETRY_SCHEDULE_MS', 'WEBHOOK_TIMEOUT_MS', 'IMPORT_MAX_BYTES', 'ATTACHMENT_MAX_BYTES',
] as const;

/**
 * The default retry schedule (Standard Webhooks' usual one): after the first attempt, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
 * and 10 h: 8 attempts over more than 27 hours, so a receiver that is down for a day still gets every event.
 */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/**
 * The environment with `<dir>/.env` filled in underneath: a variable already set in the environment wins.
 * A missing file is fine; an unreadable one is an error naming it.
 */
export function withDotEnv(env: NodeJS.ProcessEnv, dir = process.cwd()): NodeJS.ProcessEnv {
  const file = path.join(dir, '.env');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return env;
    throw new ConfigError('.env', `cannot be read: ${(error as Error).message}`);
  }
  return { ...parseEnv(text), ...env };
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T, fold = (s: string) => s): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = fold(raw.trim()) as T;
  if (!allowed.includes(value)) throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${raw}")`);
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = oneOf(env, name, ['true', 'false', '1', '0'], 'false', (s) => s.toLowerCase());
  return value === 'true' || value === '1';
}

function httpUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `must be an http(s) URL (got "${raw}")`);
  return raw.replace(/\/$/, '');
}

/** A comma-separated list of delays in milliseconds (WEBHOOK_RETRY_SCHEDULE_MS): at most 50, each up to 7 days. */
function delays(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const parts = raw.split(',').map((s) => s.trim());
  if (parts.length > 50 || parts.some((p) => !/^\d+$/.test(p) || Number(p) > 7 * 86_400_000)) {
    throw new ConfigError(name, `must be up to 50 delays in milliseconds separated by commas, each at most 604800000 (got "${raw}")`);
  }
  return parts.map(Number);
}

/** DATABASE_URL: a PostgreSQL URL (contract section 11), or nothing for the SQLite file; anything else is refused. */
function databaseUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL', `must be a URL like postgres://user:password@host:5432/database (got a malformed value)`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL', `must start with postgres:// or postgresql:// (got ${url.protocol}//)`);
  }
  return raw;
}

/** The configuration, or a ConfigError naming the first bad variable. */
export function readConfig(env: NodeJS.ProcessEnv = process.env, version = '0.0.0'): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const database = databaseUrl(env);
  const adminEmail = env.ADMIN_EMAIL || undefined;
  if (adminEmail && !/^[^\s@]+@[^\s@]+$/.test(adminEmail)) throw new ConfigError('ADMIN_EMAIL', `must be an email address (got "${adminEmail}")`);
  const adminPassword = env.ADMIN_PASSWORD || undefined;
  if (adminPassword !== undefined && adminPassword.length < 8) throw new ConfigError('ADMIN_PASSWORD', 'must be at least 8 characters long');
  const allowPrivate = (env.PLUGIN_PROXY_ALLOW_PRIVATE ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const pair of allowPrivate) {
    if (!/^[^\s:]+:\d{1,5}$/.test(pair) && !/^\[[0-9a-fA-F:.]+\]:\d{1,5}$/.test(pair)) {
      throw new ConfigError('PLUGIN_PROXY_ALLOW_PRIVATE', `must list host:port pairs separated by commas (got "${pair}")`);
    }
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long');
  const workers = integer(env, 'WORKERS', 1, 1, 64);
  // Processes over one SQLite file would each keep their own caches and limits: several need the shared database.
  if (workers > 1 && !database) throw new ConfigError('WORKERS', `above 1 needs DATABASE_URL (PostgreSQL): one process serves a SQLite file (got ${workers})`);
  return {
    port,
    host,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: database,
    publicUrl: httpUrl(env, 'PUBLIC_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    adminEmail,
    adminPassword,
    userTokenTtl: integer(env, 'USER_TOKEN_TTL', 86400, 60),
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', ['NORMAL', 'FULL'], 'NORMAL', (s) => s.toUpperCase()),
    version,
    proxyAllowPrivate: allowPrivate,
    proxyTimeoutMs: integer(env, 'PLUGIN_PROXY_TIMEOUT_MS', 10_000, 1),
    proxyMaxBytes: integer(env, 'PLUGIN_PROXY_MAX_BYTES', 5 * 1024 * 1024, 1),
    proxyRatePerMinute: integer(env, 'PLUGIN_PROXY_RATE_PER_MINUTE', 60, 1),
    trustProxy: flag(env, 'TRUST_PROXY'),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info', (s) => s.toLowerCase()),
    metricsToken,
    workers,
    workflowLeaseMs: integer(env, 'WORKFLOW_LEASE_SECONDS', 30, 1, 3600) * 1000,
    eventLog: oneOf(env, 'EVENT_LOG', ['on', 'off'], 'on', (s) => s.toLowerCase()) === 'on',
    eventRetentionDays: integer(env, 'EVENT_RETENTION_DAYS', 30, 1, 3650),
    trashRetentionDays: integer(env, 'TRASH_RETENTION_DAYS', 30, 1, 3650),
    historyRetentionDays: integer(env, 'HISTORY_RETENTION_DAYS', 365, 1, 3650),
    webhookRetryScheduleMs: delays(env, 'WEBHOOK_RETRY_SCHEDULE_MS', DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    importMaxBytes: integer(env, 'IMPORT_MAX_BYTES', 1024 ** 3, 1),
    attachmentMaxBytes: integer(env, 'ATTACHMENT_MAX_BYTES', 100 * 1024 ** 2, 1),
  };
}
