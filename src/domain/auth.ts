// Login, logout and turning a bearer token into an actor; repeated failed logins for one email are slowed down.
import { verify } from '@node-rs/argon2';
import { AppError, unauthorized } from '../errors.js';
import type { AppService } from './apps.js';
import type { Actor, Deps, UserActor } from './deps.js';
import type { User, UserService } from './users.js';

export const USER_AUDIENCE = 'table-service:user';

const FAILURE_WINDOW_MS = 15 * 60_000;
const FREE_FAILURES = 5;

/** Failed logins per email: after five in 15 minutes, each further attempt waits 2^(n-5) seconds (at most 15 minutes). */
function createLoginThrottle() {
  const failures = new Map<string, { count: number; last: number }>();
  return {
    check(email: string) {
      const f = failures.get(email);
      if (!f || Date.now() - f.last > FAILURE_WINDOW_MS) return;
      if (f.count < FREE_FAILURES) return;
      const waitMs = Math.min(2 ** (f.count - FREE_FAILURES) * 1000, FAILURE_WINDOW_MS);
      const left = f.last + waitMs - Date.now();
      if (left > 0) {
        const seconds = Math.ceil(left / 1000);
        throw new AppError('RATE_LIMITED', `Too many failed logins for this email; try again in ${seconds} s`, { headers: { 'Retry-After': String(seconds) } });
      }
    },
    fail(email: string) {
      const f = failures.get(email);
      const fresh = !f || Date.now() - f.last > FAILURE_WINDOW_MS;
      failures.set(email, { count: fresh ? 1 : f.count + 1, last: Date.now() });
      if (failures.size > 100_000) failures.clear();
    },
    succeed(email: string) {
      failures.delete(email);
    },
  };
}

// A hash to verify against when the email is unknown, so both failures take the same time.
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$KXnTNVJYOPoI8o8MnkcLjw$+ZCt4fZZKr9pPSyp53MFRBQyEk3+0snTICDhzKwJh8s';

export function createAuthService(deps: Deps, users: UserService, apps: AppService) {
  const throttle = createLoginThrottle();

  return {
    async login(emailInput: string, password: string): Promise<{ token: string; tokenType: 'Bearer'; expiresIn: number; user: User }> {
      const email = String(emailInput ?? '').trim().toLowerCase();
      throttle.check(email);
      const row = users.findByEmail(email);
      const ok = await verify(row?.passwordHash ?? DUMMY_HASH, String(password ?? '')).catch(() => false);
      if (!row || !ok) {
        throttle.fail(email);
        throw unauthorized('Wrong email or password');
      }
      throttle.succeed(email);
      const ttl = deps.config.userTokenTtl;
      const { token } = await deps.tokens.sign({ sub: row.id, token_type: 'user' }, USER_AUDIENCE, ttl);
      return { token, tokenType: 'Bearer', expiresIn: ttl, user: await users.getUser(row.id) };
    },

    async logout(actor: UserActor): Promise<{ loggedOut: true }> {
      deps.revocations.revoke([{ jti: actor.jti, expiresAt: actor.exp }]);
      return { loggedOut: true };
    },

    /**
     * The actor behind an `Authorization` header, or null when there is none. A bad, expired or revoked token is a 401;
     * a user token and an application token each carry their own audience.
     */
    async actorFromHeader(header: string | null): Promise<Actor | null> {
      if (!header) return null;
      const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
      if (!m) throw unauthorized('The Authorization header must be "Bearer <token>"');
      const result = await deps.tokens.verify(m[1]);
      if (!result.ok) throw unauthorized(result.reason === 'expired' ? 'The token has expired' : 'The token is invalid');
      const { claims } = result;
      if (claims.token_type === 'app') return apps.actorFromClaims(claims);
      if (claims.token_type !== 'user' || claims.aud !== USER_AUDIENCE) throw unauthorized('The token is invalid');
      if (deps.revocations.isRevoked(claims.jti)) throw unauthorized('The token has been revoked');
      const user = users.findById(claims.sub);
      if (!user) throw unauthorized('The token belongs to a user that no longer exists');
      return { kind: 'user', id: user.id, isAdmin: user.isAdmin, email: user.email, name: user.name, jti: claims.jti, exp: claims.exp };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
