// Sliding-window rate limits: the exact count of accepted requests in the last window, per key.

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a request is allowed again (0 while requests remain). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request against `key` if it fits in `limit` per `windowMs`. */
  hit(key: string, limit: number, windowMs?: number): RateDecision;
  /** What a request would be told now, without counting it. */
  peek(key: string, limit: number, windowMs?: number): RateDecision;
}

/** The in-process limiter: a log of accepted request times per key. A cluster would share one behind the same interface. */
export function createRateLimiter(now: () => number = Date.now): RateLimiter {
  const logs = new Map<string, number[]>();

  function decide(key: string, limit: number, windowMs: number, count: boolean): RateDecision {
    const t = now();
    let log = logs.get(key);
    if (!log) logs.set(key, (log = []));
    // Drop what left the window; the log is in time order.
    let drop = 0;
    while (drop < log.length && log[drop] <= t - windowMs) drop++;
    if (drop) log.splice(0, drop);
    const allowed = log.length < limit;
    if (allowed && count) log.push(t);
    const remaining = Math.max(0, limit - log.length);
    // When full, the next request fits once the oldest entry that keeps the log at the limit leaves the window.
    const resetSeconds = remaining > 0 ? 0 : Math.max(1, Math.ceil((log[log.length - limit] + windowMs - t) / 1000));
    return { allowed, limit, remaining, resetSeconds };
  }

  return {
    hit: (key, limit, windowMs = 60_000) => decide(key, limit, windowMs, true),
    peek: (key, limit, windowMs = 60_000) => decide(key, limit, windowMs, false),
  };
}
