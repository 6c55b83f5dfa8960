// Open API rate limits (contract section 6): sliding 60 s windows per application, overall and for record writes,
// with RateLimit-* headers on every answer and Retry-After on a 429.
import type { RateDecision, RateLimiter } from '../src/auth/rate-limit.js';
import type { AppService } from '../src/domain/apps.js';
import { AppError } from '../src/errors.js';
import type { Context } from '../schema/context.js';
import type { Outcome } from './adapter.js';
import type { Route } from './route.js';

function describe(d: RateDecision): Record<string, string> {
  return { 'RateLimit-Limit': String(d.limit), 'RateLimit-Remaining': String(d.remaining), 'RateLimit-Reset': String(d.resetSeconds) };
}

export function createOpenRateLimit(apps: AppService, limiter: RateLimiter) {
  return async (route: Route, ctx: Context, run: () => Promise<Outcome>, headers: Record<string, string>): Promise<Outcome> => {
    if (route.family !== 'open' || !route.path.startsWith('/api/open/') || ctx.actor?.kind !== 'app') return run();
    const app = apps.current(ctx.actor.id);
    if (!app) return run();
    const overallKey = `open:${app.id}`;
    const writeKey = `open-write:${app.id}`;
    // Look before counting, so a request refused by one window is not counted in the other.
    const overall = limiter.peek(overallKey, app.rateLimitPerMinute);
    const write = route.recordWrite ? limiter.peek(writeKey, app.writeRateLimitPerMinute) : undefined;
    const refusedBy = !overall.allowed ? overall : write && !write.allowed ? write : undefined;
    if (refusedBy) {
      Object.assign(headers, describe(refusedBy), { 'Retry-After': String(refusedBy.resetSeconds) });
      throw new AppError('RATE_LIMITED', `Rate limit of ${refusedBy.limit} ${refusedBy === write ? 'record writes' : 'requests'} per minute exceeded; retry in ${refusedBy.resetSeconds} s`);
    }
    const counted = limiter.hit(overallKey, app.rateLimitPerMinute);
    const countedWrite = route.recordWrite ? limiter.hit(writeKey, app.writeRateLimitPerMinute) : undefined;
    Object.assign(headers, describe(countedWrite ?? counted));
    return run();
  };
}
