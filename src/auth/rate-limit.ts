// Sliding-window rate limits: the exact count of accepted requests in the last window, per key. The interface is
// asynchronous so a limiter shared by several processes (src/db/pg-limits.ts) can stand behind it.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a request is allowed again (0 while requests remain). */
  resetSeconds: number;
}

/** One window to charge: `n` (default 1) requests against `key`, at most `limit` per window. */
export interface RateEntry {
  key: string;
  limit: number;
  n?: number;
}

export interface RateLimiter {
  /**
   * Charges every entry (distinct keys) in one step: each entry's `n` is counted only if every entry fits, so a request
   * refused by one window is counted in none. The decisions are in entry order: after counting when everything fitted,
   * otherwise what each entry would be told now (at least one of them refused).
   */
  chargeAll(entries: RateEntry[], windowMs?: number): Promise<RateDecision[]>;
  /** Counts `n` (default 1) requests against `key` if they all fit in `limit` per `windowMs`: chargeAll of one entry. */
  hit(key: string, limit: number, windowMs?: number, n?: number): Promise<RateDecision>;
  /** What `n` requests would be told now, without counting them. */
  peek(key: string, limit: number, windowMs?: number, n?: number): Promise<RateDecision>;
}

export const DEFAULT_WINDOW_MS = 60_000;

/** True when every decision of a chargeAll allowed its entry, i.e. everything was counted. */
export function allAllowed(decisions: RateDecision[]): boolean {
  return decisions.every((d) => d.allowed);
}

/**
 * The in-process limiter: a log of accepted request times per key, for one process (SQLite). Each call answers with an
 * already settled promise, so a request costs no more than the one await of its caller.
 */
export function createRateLimiter(now: () => number = Date.now): RateLimiter {
  const logs = new Map<string, number[]>();

  function decide(key: string, limit: number, windowMs: number, n: number, count: boolean): RateDecision {
    const t = now();
    let log = logs.get(key);
    if (!log) logs.set(key, (log = []));
    // Drop what left the window; the log is in time order.
    let drop = 0;
    while (drop < log.length && log[drop] <= t - windowMs) drop++;
    if (drop) log.splice(0, drop);
    const allowed = log.length + n <= limit;
    if (allowed && count) for (let i = 0; i < n; i++) log.push(t);
    const remaining = Math.max(0, limit - log.length);
    // The next request (or these n, when refused) fits once the k oldest entries have left the window.
    const k = log.length + (allowed ? 1 : n) - limit;
    const entry = log[Math.min(k, log.length) - 1] ?? t;
    const resetSeconds = k <= 0 ? 0 : Math.max(1, Math.ceil((entry + windowMs - t) / 1000));
    return { allowed, limit, remaining, resetSeconds };
  }

  function chargeAll(entries: RateEntry[], windowMs: number): RateDecision[] {
    // Look before counting (one process: nothing can come between the look and the count).
    const looks = entries.map((e) => decide(e.key, e.limit, windowMs, e.n ?? 1, false));
    if (!allAllowed(looks)) return looks;
    return entries.map((e) => decide(e.key, e.limit, windowMs, e.n ?? 1, true));
  }

  return {
    chargeAll: (entries, windowMs = DEFAULT_WINDOW_MS) => Promise.resolve(chargeAll(entries, windowMs)),
    hit: (key, limit, windowMs = DEFAULT_WINDOW_MS, n = 1) => Promise.resolve(decide(key, limit, windowMs, n, true)),
    peek: (key, limit, windowMs = DEFAULT_WINDOW_MS, n = 1) => Promise.resolve(decide(key, limit, windowMs, n, false)),
  };
}
