// Sliding-window rate limits: the exact count of accepted requests in the last window, per key.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a request is allowed again (0 while requests remain). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts `n` (default 1) requests against `key` if they all fit in `limit` per `windowMs`. */
  hit(key: string, limit: number, windowMs?: number, n?: number): RateDecision;
  /** What `n` requests would be told now, without counting them. */
  peek(key: string, limit: number, windowMs?: number, n?: number): RateDecision;
}

/** The in-process limiter: a log of accepted request times per key. A cluster would share one behind the same interface. */
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

  return {
    hit: (key, limit, windowMs = 60_000, n = 1) => decide(key, limit, windowMs, n, true),
    peek: (key, limit, windowMs = 60_000, n = 1) => decide(key, limit, windowMs, n, false),
  };
}
