// Application rate limits (contract sections 6 and 8): sliding 60 s windows per application, one for all requests and one
// for record writes, shared by every door an application token can use (the Open API and /graphql) and, on PostgreSQL,
// by every process serving the database.
import type { RateDecision, RateEntry, RateLimiter } from '../auth/rate-limit.js';
import { AppError } from '../errors.js';
import type { AppService } from './apps.js';

/** The RateLimit-* headers of a decision (integers; Reset is the seconds until a request is allowed again). */
function describe(d: RateDecision): Record<string, string> {
  return { 'RateLimit-Limit': String(d.limit), 'RateLimit-Remaining': String(d.remaining), 'RateLimit-Reset': String(d.resetSeconds) };
}

export function createAppRateLimits(apps: AppService, limiter: RateLimiter) {
  return {
    /**
     * Counts one request of the application, making `writes` record writes, against its windows and resolves to the
     * headers for the answer; over a limit it rejects with RATE_LIMITED (with Retry-After) and counts nothing.
     */
    async charge(appId: string, writes: number): Promise<Record<string, string>> {
      const app = apps.current(appId);
      if (!app) return {};
      const entries: RateEntry[] = [{ key: `open:${app.id}`, limit: app.rateLimitPerMinute }];
      if (writes > 0) entries.push({ key: `open-write:${app.id}`, limit: app.writeRateLimitPerMinute, n: writes });
      // Both windows in one atomic step: a request refused by one window is counted in neither, across processes too.
      const [overall, write] = await limiter.chargeAll(entries, 60_000);
      if (!overall.allowed || (write && !write.allowed)) {
        const refusedBy = !overall.allowed ? overall : write!;
        const what = refusedBy === write ? 'record writes' : 'requests';
        throw new AppError('RATE_LIMITED', `Rate limit of ${refusedBy.limit} ${what} per minute exceeded; retry in ${refusedBy.resetSeconds} s`, {
          headers: { ...describe(refusedBy), 'Retry-After': String(refusedBy.resetSeconds) },
        });
      }
      return describe(write ?? overall);
    },
  };
}

export type AppRateLimits = ReturnType<typeof createAppRateLimits>;
