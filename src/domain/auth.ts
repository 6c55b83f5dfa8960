// Login, logout and turning a bearer token into an actor; repeated failed logins are slowed down per email and per
// client address by a login throttle (src/auth/login-throttle.ts; shared by every process on PostgreSQL).
import { verify } from '@node-rs/argon2';
import { createLoginThrottle, type LoginThrottle } from '../auth/login-throttle.js';
import { unauthorized } from '../errors.js';
import type { AppService } from './apps.js';
import type { Actor, Deps, UserActor } from './deps.js';
import type { User, UserService } from './users.js';

export const USER_AUDIENCE = 'table-service:user';

export {
  createLoginThrottle, DEFAULT_THROTTLE_CAPACITY, FREE_FAILURES_PER_ADDRESS, FREE_FAILURES_PER_EMAIL, throttleAddress, type LoginThrottle,
} from '../auth/login-throttle.js';

// A hash to verify against when the email is unknown, so both failures take the same time.
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$KXnTNVJYOPoI8o8MnkcLjw$+ZCt4fZZKr9pPSyp53MFRBQyEk3+0snTICDhzKwJh8s';

/** `throttle` is the in-process one unless app.ts hands in a shared one (PostgreSQL). */
export function createAuthService(deps: Deps, users: UserService, apps: AppService, throttle: LoginThrottle = createLoginThrottle()) {
  return {
    /** `clientAddress` is the caller's network address (the GraphQL context's), for the per-address throttle. */
    async login(emailInput: string, password: string, clientAddress: string): Promise<{ token: string; tokenType: 'Bearer'; expiresIn: number; user: User }> {
      const email = String(emailInput ?? '').trim().toLowerCase();
      await throttle.check(email, clientAddress);
      const row = await users.findByEmail(email);
      const ok = await verify(row?.passwordHash ?? DUMMY_HASH, String(password ?? '')).catch(() => false);
      if (!row || !ok) {
        await throttle.fail(email, clientAddress);
        throw unauthorized('Wrong email or password');
      }
      await throttle.succeed(email, clientAddress);
      const ttl = deps.config.userTokenTtl;
      const { token } = await deps.tokens.sign({ sub: row.id, token_type: 'user' }, USER_AUDIENCE, ttl);
      return { token, tokenType: 'Bearer', expiresIn: ttl, user: await users.getUser(row.id) };
    },

    async logout(actor: UserActor): Promise<{ loggedOut: true }> {
      await deps.revocations.revoke([{ jti: actor.jti, expiresAt: actor.exp }]);
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
      const user = await users.findById(claims.sub);
      if (!user) throw unauthorized('The token belongs to a user that no longer exists');
      return { kind: 'user', id: user.id, isAdmin: user.isAdmin, email: user.email, name: user.name, jti: claims.jti, exp: claims.exp };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
