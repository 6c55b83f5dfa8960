// Application rate limits (contract sections 6 and 8): sliding 60 s windows per application, one for all requests and one
// for record writes, shared by every door an application token can use (the Open API and /graphql).
import type { RateDecision, RateLimiter } from '../auth/rate-limit.js';
import { AppError } from '../errors.js';
import type { AppService } from './apps.js';

/** The RateLimit-* headers of a decision (integers; Reset is the seconds until a request is allowed again). */
function describe(d: RateDecision): Record<string, string> {
  return { 'RateLimit-Limit': String(d.limit), 'RateLimit-Remaining': String(d.remaining), 'RateLimit-Reset': String(d.resetSeconds) };
}

export function createAppRateLimits(apps: AppService, limiter: RateLimiter) {
  return {
    /**
     * Counts one request of the application, making `writes` record writes, against its windows and returns the
     * headers for the answer; over a limit it throws RATE_LIMITED (with Retry-After) and counts nothing.
     */
    charge(appId: string, writes: number): Record<string, string> {
      const app = apps.current(appId);
      if (!app) return {};
      const overallKey = `open:${app.id}`;
      const writeKey = `open-write:${app.id}`;
      // Look before counting, so a request refused by one window is not counted in the other.
      const overall = limiter.peek(overallKey, app.rateLimitPerMinute);
      const write = writes > 0 ? limiter.peek(writeKey, app.writeRateLimitPerMinute, 60_000, writes) : undefined;
      const refusedBy = !overall.allowed ? overall : write && !write.allowed ? write : undefined;
      if (refusedBy) {
        const what = refusedBy === write ? 'record writes' : 'requests';
        throw new AppError('RATE_LIMITED', `Rate limit of ${refusedBy.limit} ${what} per minute exceeded; retry in ${refusedBy.resetSeconds} s`, {
          headers: { ...describe(refusedBy), 'Retry-After': String(refusedBy.resetSeconds) },
        });
      }
      const counted = limiter.hit(overallKey, app.rateLimitPerMinute);
      const countedWrite = writes > 0 ? limiter.hit(writeKey, app.writeRateLimitPerMinute, 60_000, writes) : undefined;
      return describe(countedWrite ?? counted);
    },
  };
}

export type AppRateLimits = ReturnType<typeof createAppRateLimits>;
