// Rate limits and login throttling shared by every process serving one PostgreSQL database (tables rate_hits and
// login_failures), one round trip per decision. Times come from the database's clock unless a test injects one, so
// processes on hosts whose clocks disagree still share one window.
import type pg from 'pg';
import { DEFAULT_WINDOW_MS, type RateDecision, type RateEntry, type RateLimiter } from '../auth/rate-limit.js';
import {
  FAILURE_WINDOW_MS, FREE_FAILURES_PER_ADDRESS, FREE_FAILURES_PER_EMAIL, failureWaitMs, refuseWhileWaiting, throttleAddress,
  type LoginThrottle,
} from '../auth/login-throttle.js';

/** The database's clock in milliseconds, or the injected time ($n) when a test passes one. */
const NOW_MS = (param: string) => `coalesce(${param}::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)`;

/** How often one process clears rows nobody will read again (keys no longer charged, failures past the window). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Runs `sweep` in the background at most once per SWEEP_EVERY_MS: it only deletes rows that can no longer change a
 * decision, so it never needs to finish before an answer, and a failure (a pool closing) is harmless. Sweeps skip rows
 * a charge or a failure holds (SKIP LOCKED): a sweep never waits, so it can never deadlock with them.
 */
function sweeper(sweep: () => Promise<unknown>) {
  let next = 0;
  return () => {
    const t = Date.now();
    if (t < next) return;
    next = t + SWEEP_EVERY_MS;
    sweep().catch(() => {});
  };
}

/**
 * The shared limiter: every charge is one call of rate_limit_charge (migration 0001), which locks the keys, counts their
 * windows, decides and records in one transaction. `now` is for tests; without it the database's clock decides.
 */
export function createPgRateLimiter(pool: pg.Pool, opts: { now?: () => number } = {}): RateLimiter {
  let longestWindow = DEFAULT_WINDOW_MS;
  // Every key's own old rows go whenever it is charged; this catches keys that are never charged again (a deleted app).
  const sweep = sweeper(() => pool.query(`DELETE FROM rate_hits WHERE (key, at_ms) IN (
    SELECT key, at_ms FROM rate_hits WHERE at_ms <= ${NOW_MS('$1')} - $2 FOR UPDATE SKIP LOCKED)`, [opts.now?.() ?? null, longestWindow]));

  async function run(entries: RateEntry[], windowMs: number, count: boolean): Promise<RateDecision[]> {
    if (!entries.length) return [];
    if (new Set(entries.map((e) => e.key)).size !== entries.length) throw new Error('rate limiter: the keys of one charge must be distinct');
    longestWindow = Math.max(longestWindow, windowMs);
    sweep();
    const { rows } = await pool.query<{ allowed: boolean; remaining: string; reset_seconds: string }>(
      'SELECT allowed, remaining, reset_seconds FROM rate_limit_charge($1::text[], $2::bigint[], $3::bigint[], $4, $5, $6)',
      [entries.map((e) => e.key), entries.map((e) => e.limit), entries.map((e) => e.n ?? 1), windowMs, count, opts.now?.() ?? null],
    );
    return rows.map((r, i) => ({ allowed: r.allowed, limit: entries[i].limit, remaining: Number(r.remaining), resetSeconds: Number(r.reset_seconds) }));
  }

  return {
    chargeAll: (entries, windowMs = DEFAULT_WINDOW_MS) => run(entries, windowMs, true),
    hit: async (key, limit, windowMs = DEFAULT_WINDOW_MS, n = 1) => (await run([{ key, limit, n }], windowMs, true))[0],
    peek: async (key, limit, windowMs = DEFAULT_WINDOW_MS, n = 1) => (await run([{ key, limit, n }], windowMs, false))[0],
  };
}

const emailKey = (email: string) => `email:${email}`;
const addressKey = (address: string) => `address:${throttleAddress(address)}`;

/**
 * The shared login throttle: one row per email and per (counted) address in login_failures, with the same waiting
 * rule as the in-process throttle (failureWaitMs). No capacity bound is needed: rows past the window count for nothing
 * and are swept. A check is one SELECT, a failure one upsert of both rows, a success one DELETE of the email's row.
 */
export function createPgLoginThrottle(pool: pg.Pool, opts: { now?: () => number } = {}): LoginThrottle {
  const now = () => opts.now?.() ?? null;
  const sweep = sweeper(() => pool.query(`DELETE FROM login_failures WHERE key IN (
    SELECT key FROM login_failures WHERE last_ms < ${NOW_MS('$1')} - $2 FOR UPDATE SKIP LOCKED)`, [now(), FAILURE_WINDOW_MS]));

  return {
    async check(email, address) {
      const keys = [emailKey(email), addressKey(address)];
      // The clock row always comes back, with each key's failures beside it when it has any.
      const { rows } = await pool.query<{ key: string | null; count: string | null; last_ms: string | null; now_ms: string }>(
        `SELECT f.key, f.count, f.last_ms, c.now_ms FROM (SELECT ${NOW_MS('$2')} AS now_ms) c
           LEFT JOIN login_failures f ON f.key = ANY($1::text[])`,
        [keys, now()],
      );
      const at = Number(rows[0].now_ms);
      const entry = (key: string) => {
        const r = rows.find((x) => x.key === key);
        return r ? { count: Number(r.count), last: Number(r.last_ms) } : undefined;
      };
      refuseWhileWaiting(failureWaitMs(entry(keys[0]), FREE_FAILURES_PER_EMAIL, at), failureWaitMs(entry(keys[1]), FREE_FAILURES_PER_ADDRESS, at));
    },
    async fail(email, address) {
      sweep();
      // Atomic per row, so failures from several processes at once all count (nextFailureCount's rule, in SQL).
      await pool.query(
        `INSERT INTO login_failures AS f (key, count, last_ms)
           SELECT k, 1, c.now_ms FROM unnest($1::text[]) AS k, (SELECT ${NOW_MS('$2')} AS now_ms) c
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN excluded.last_ms - f.last_ms > $3 THEN 1 ELSE f.count + 1 END,
           last_ms = excluded.last_ms`,
        [[emailKey(email), addressKey(address)], now(), FAILURE_WINDOW_MS],
      );
    },
    async succeed(email) {
      // The email's failures only, as in-process: a success must not reset the address's count.
      await pool.query('DELETE FROM login_failures WHERE key = $1', [emailKey(email)]);
    },
  };
}
