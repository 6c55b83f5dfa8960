// Third-party applications: administration, client-credentials tokens, revocation, and the application behind a token.
// Applications are cached in memory so verifying a request needs no query (spec 1, 2.2).
import { createHash, randomBytes, timingSafeEqual, randomUUID } from 'node:crypto';
import { and, desc, eq, gt, isNull, inArray, sql } from 'drizzle-orm';
import { coalesced, first, groupCommit, type Db, type Schema, type UnitOfWork } from '../db/store.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { nowIso } from '../ids.js';
import type { AuditLog } from './audit.js';
import type { AppActor, Deps } from './deps.js';
import type { TokenClaims } from '../auth/tokens.js';

export const SCOPES = ['base:read', 'table:read', 'field:read', 'record:read', 'record:write', 'table:write'] as const;
export type Scope = (typeof SCOPES)[number];
export const APP_TOKEN_TTL = 7200;
export const DEFAULT_RATE_LIMIT = 600;
export const DEFAULT_WRITE_RATE_LIMIT = 300;

export type AppRow = Schema['apps']['$inferSelect'];
export interface AppInput {
  appName?: unknown;
  callbackUrl?: unknown;
  allowedBases?: unknown;
  scopes?: unknown;
  isActive?: unknown;
  rateLimitPerMinute?: unknown;
  writeRateLimitPerMinute?: unknown;
}
export interface IssuedToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  scope: string;
}
export interface TokenInfo {
  jti: string;
  scope: string;
  issuedAt: string;
  expiresAt: string;
  revoked: boolean;
  revokedAt: string | null;
}

const hashSecret = (secret: string) => createHash('sha256').update(secret).digest();
const randomToken = (bytes: number) => randomBytes(bytes).toString('base64url');
const bad = (field: string, message: string) => badRequest(`${field} ${message}`, [{ field, message }]);

/** The Open API audience: tokens for /api/open/v1 carry it in `aud`. */
export const openApiAudience = (publicUrl: string) => `${publicUrl}/api/open/v1`;

export function createAppService(deps: Deps, audit: AuditLog) {
  const { store, tokens, revocations, config } = deps;
  const { appTokens, apps, bases } = store.schema;
  const audience = openApiAudience(config.publicUrl);
  // Prepared once per connection (UnitOfWork.prepared): every token issued is one insert, and building it is most of its cost.
  const p = (name: string) => sql`${sql.placeholder(name)}`;
  const insertToken = (db: Db) => db.insert(appTokens)
    .values({ jti: p('jti'), appId: p('appId'), scope: p('scope'), issuedAt: p('issuedAt'), expiresAt: p('expiresAt') }).prepare();
  type TokenRow = { jti: string; appId: string; scope: string; issuedAt: string; expiresAt: number };
  // A token is recorded before it is answered; concurrent requests share the commit (a commit of its own was over a
  // third of a token's cost).
  const recordToken = groupCommit<TokenRow>(store, async (tx, rows) => {
    for (const row of rows) await tx.prepared(insertToken).execute(row);
  });

  // The in-memory registry, loaded once at start; every change below writes the database first, then refreshes the
  // entry once the change has committed.
  const byId = new Map<string, AppRow>();
  const byClientId = new Map<string, AppRow>();
  function remember(row: AppRow | undefined, id: string) {
    const old = byId.get(id);
    if (old) byClientId.delete(old.clientId);
    byId.delete(id);
    if (row) {
      byId.set(row.id, row);
      byClientId.set(row.clientId, row);
    }
  }
  /** After a change in `tx`: this process's registry learns of it once committed, the others are told. */
  function changed(tx: UnitOfWork, row: AppRow | undefined, id: string) {
    tx.afterCommit(() => remember(row, id));
    tx.announce('apps');
  }
  let loaded = false;
  const loading = (async () => {
    for (const row of await store.db.select().from(apps)) remember(row, row.id);
    loaded = true;
  })();
  // Another process changed an application: read them all again (a handful of rows) and replace the registry.
  store.onAnnouncement('apps', coalesced('applications', async () => {
    await registry();
    const rows = await store.db.select().from(apps);
    byId.clear();
    byClientId.clear();
    for (const row of rows) remember(row, row.id);
  }));
  // A failed load is reported by every call that waits for it, not as an unhandled rejection.
  loading.catch(() => {});
  /**
   * Waits for the registry's first load. Everything that reads or changes the registry waits for it first (the hot
   * paths only test `loaded`), so the load never overwrites a later change; `current` needs no wait, since it is only
   * asked about an application whose token `actorFromClaims` has accepted.
   */
  async function registry() {
    if (!loaded) await loading;
  }

  /**
   * An application by id or client id from the registry; one it does not hold yet (another process created it a moment
   * ago, before its announcement arrived) is read from the database and kept, so a token issued anywhere works everywhere.
   */
  async function lookup(by: 'id' | 'clientId', key: string): Promise<AppRow | undefined> {
    await registry();
    const known = by === 'id' ? byId.get(key) : byClientId.get(key);
    if (known) return known;
    const row = await first(store.db.select().from(apps).where(eq(by === 'id' ? apps.id : apps.clientId, key)).limit(1));
    if (row) remember(row, row.id);
    return row;
  }

  async function load(id: string): Promise<AppRow> {
    await registry();
    const row = byId.get(id);
    if (!row) throw notFound(`Application ${id} not found`);
    return row;
  }

  /** Reads outside transactions (the allow-list's bases must exist). */
  async function validate(input: AppInput, creating: boolean) {
    const out: Partial<Schema['apps']['$inferInsert']> = {};
    if (creating || input.appName !== undefined) {
      if (typeof input.appName !== 'string' || input.appName.trim().length < 1 || input.appName.length > 100) throw bad('app_name', 'must be 1 to 100 characters');
      out.appName = input.appName.trim();
    }
    if (creating || input.callbackUrl !== undefined) {
      let ok = false;
      try {
        ok = typeof input.callbackUrl === 'string' && ['http:', 'https:'].includes(new URL(input.callbackUrl).protocol);
      } catch {
        /* not a URL */
      }
      if (!ok) throw bad('callback_url', 'must be an absolute http(s) URL');
      out.callbackUrl = input.callbackUrl as string;
    }
    if (creating || input.scopes !== undefined) {
      const s = input.scopes;
      if (!Array.isArray(s) || s.length === 0) throw bad('scopes', `must be a non-empty array of ${SCOPES.join(', ')}`);
      const unknown = s.find((x) => !(SCOPES as readonly unknown[]).includes(x));
      if (unknown !== undefined) throw bad('scopes', `has an unknown scope ${JSON.stringify(unknown)}; allowed: ${SCOPES.join(', ')}`);
      out.scopes = [...new Set(s as string[])];
    }
    if (creating || input.allowedBases !== undefined) {
      const b = input.allowedBases ?? [];
      if (!Array.isArray(b) || b.some((x) => typeof x !== 'string')) throw bad('allowed_bases', 'must be an array of base ids');
      const ids = [...new Set(b as string[])];
      const found = new Set(ids.length ? (await store.db.select({ id: bases.id }).from(bases).where(inArray(bases.id, ids))).map((r) => r.id) : []);
      const missing = ids.find((id) => !found.has(id));
      if (missing) throw bad('allowed_bases', `names a base that does not exist: ${missing}`);
      out.allowedBases = ids;
    }
    if (input.isActive !== undefined) {
      if (typeof input.isActive !== 'boolean') throw bad('is_active', 'must be true or false');
      out.isActive = input.isActive;
    }
    for (const [key, name] of [['rateLimitPerMinute', 'rate_limit_per_minute'], ['writeRateLimitPerMinute', 'write_rate_limit_per_minute']] as const) {
      const v = input[key];
      if (v === undefined || (creating && v === null)) continue;
      if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 1_000_000) throw bad(name, 'must be an integer from 1 to 1000000');
      out[key] = v as number;
    }
    return out;
  }

  function tokenInfo(row: Schema['appTokens']['$inferSelect']): TokenInfo {
    return {
      jti: row.jti, scope: row.scope, issuedAt: row.issuedAt, expiresAt: new Date(row.expiresAt * 1000).toISOString(),
      revoked: row.revokedAt !== null || revocations.isRevoked(row.jti), revokedAt: row.revokedAt,
    };
  }

  /** The application's row read through the transaction; 404 when it went in the meantime. */
  async function rowIn(tx: UnitOfWork, id: string): Promise<AppRow> {
    const row = await first(tx.db.select().from(apps).where(eq(apps.id, id)).limit(1));
    if (!row) throw notFound(`Application ${id} not found`);
    return row;
  }

  /** Inside a transaction: revokes one token or every live one of an application; how many were revoked now. */
  async function revokeWhere(tx: UnitOfWork, appId: string, jti?: string): Promise<number> {
    const now = Math.floor(Date.now() / 1000);
    const where = jti
      ? and(eq(appTokens.appId, appId), eq(appTokens.jti, jti))
      : and(eq(appTokens.appId, appId), isNull(appTokens.revokedAt), gt(appTokens.expiresAt, now));
    const fresh = (await tx.db.select().from(appTokens).where(where)).filter((r) => r.revokedAt === null);
    if (fresh.length) {
      // The same rows as just read: the transaction holds the write lock.
      await tx.db.update(appTokens).set({ revokedAt: nowIso() }).where(and(where, isNull(appTokens.revokedAt)));
      await revocations.revokeIn(tx, fresh.map((r) => ({ jti: r.jti, expiresAt: r.expiresAt })));
    }
    return fresh.length;
  }

  return {
    /** RFC 8414 authorization server metadata, so standard OAuth clients discover the token endpoint. */
    serverMetadata() {
      return {
        issuer: config.publicUrl,
        token_endpoint: `${config.publicUrl}/api/oauth/token`,
        jwks_uri: `${config.publicUrl}/api/oauth/jwks.json`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: [...SCOPES],
        response_types_supported: [],
      };
    },

    /** The current registry entry of an application, or undefined when it was deleted. */
    current: (id: string) => byId.get(id),

    async listApps(): Promise<AppRow[]> {
      await registry();
      return [...byId.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    },
    async getApp(id: string): Promise<AppRow> {
      return load(id);
    },

    async createApp(input: AppInput, requestId: string): Promise<{ app: AppRow; clientSecret: string }> {
      const values = await validate(input, true);
      const clientSecret = `os_${randomToken(32)}`;
      await registry();
      return store.transaction(async (tx) => {
        const now = nowIso();
        const id = randomUUID();
        await tx.db.insert(apps).values({
          id, appName: values.appName!, callbackUrl: values.callbackUrl!, scopes: values.scopes!, allowedBases: values.allowedBases!,
          clientId: `oa_${randomToken(24)}`, secretHash: hashSecret(clientSecret).toString('hex'), isActive: values.isActive ?? true,
          rateLimitPerMinute: values.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT,
          writeRateLimitPerMinute: values.writeRateLimitPerMinute ?? DEFAULT_WRITE_RATE_LIMIT,
          createdAt: now, updatedAt: now,
        });
        const row = await rowIn(tx, id);
        await audit.record(tx, { appId: id, action: 'app.create', requestId, detail: { app_name: row.appName, scopes: row.scopes, allowed_bases: row.allowedBases } });
        changed(tx, row, id);
        return { app: row, clientSecret };
      });
    },

    async updateApp(id: string, input: AppInput, requestId: string): Promise<AppRow> {
      await load(id);
      const changes = await validate(input, false);
      return store.transaction(async (tx) => {
        await tx.db.update(apps).set({ ...changes, updatedAt: nowIso() }).where(eq(apps.id, id));
        const row = await rowIn(tx, id);
        const detail = Object.fromEntries(Object.entries(changes).map(([k, v]) => [k.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`), v]));
        await audit.record(tx, { appId: id, action: 'app.update', requestId, detail });
        changed(tx, row, id);
        return row;
      });
    },

    async deleteApp(id: string, requestId: string): Promise<{ id: string; deleted: true }> {
      await load(id);
      return store.transaction(async (tx) => {
        const revoked = await revokeWhere(tx, id);
        const gone = await tx.db.delete(apps).where(eq(apps.id, id)).returning({ id: apps.id });
        if (!gone.length) throw notFound(`Application ${id} not found`);
        await audit.record(tx, { appId: id, action: 'app.delete', requestId, detail: { revoked_tokens: revoked } });
        changed(tx, undefined, id);
        return { id, deleted: true as const };
      });
    },

    async resetSecret(id: string, requestId: string): Promise<{ app: AppRow; clientSecret: string }> {
      await load(id);
      const clientSecret = `os_${randomToken(32)}`;
      return store.transaction(async (tx) => {
        await tx.db.update(apps).set({ secretHash: hashSecret(clientSecret).toString('hex'), updatedAt: nowIso() }).where(eq(apps.id, id));
        const row = await rowIn(tx, id);
        await audit.record(tx, { appId: id, action: 'secret.reset', requestId });
        changed(tx, row, id);
        return { app: row, clientSecret };
      });
    },

    async listTokens(id: string): Promise<TokenInfo[]> {
      await load(id);
      return (await store.db.select().from(appTokens).where(eq(appTokens.appId, id)).orderBy(desc(store.insertionOrder)).limit(1000)).map(tokenInfo);
    },

    async revokeTokens(id: string, jti: string | null | undefined, requestId: string): Promise<{ revoked: number }> {
      await load(id);
      if (jti !== undefined && jti !== null && (typeof jti !== 'string' || !jti)) throw bad('jti', 'must be a token id');
      return store.transaction(async (tx) => {
        if (jti && !(await first(tx.db.select({ jti: appTokens.jti }).from(appTokens).where(and(eq(appTokens.appId, id), eq(appTokens.jti, jti))).limit(1)))) {
          throw notFound(`Token ${jti} is not a token of application ${id}`);
        }
        const revoked = await revokeWhere(tx, id, jti ?? undefined);
        await audit.record(tx, { appId: id, action: 'token.revoke', requestId, detail: { jti: jti ?? null, revoked } });
        return { revoked };
      });
    },

    /**
     * The client-credentials grant (spec 1, 4.1; contract section 6), checks in the contract's order.
     * `credentialsInBoth` is set by the HTTP layer when Basic and body credentials came together.
     */
    async issueToken(req: { grantType?: string | null; clientId?: string | null; clientSecret?: string | null; scope?: string | null; basic?: boolean | null; credentialsInBoth?: boolean | null }): Promise<IssuedToken> {
      const basicHeaders = req.basic ? { 'WWW-Authenticate': 'Basic realm="table-service", charset="UTF-8"' } : undefined;
      if (req.credentialsInBoth) throw new AppError('invalid_request', 'Send client credentials either with HTTP Basic or in the body, not both');
      const app = req.clientId ? await lookup('clientId', req.clientId) : undefined;
      const given = hashSecret(req.clientSecret ?? '');
      const expected = app ? Buffer.from(app.secretHash, 'hex') : Buffer.alloc(32);
      const secretOk = timingSafeEqual(given, expected) && !!app && !!req.clientSecret;
      if (!app || !secretOk) throw new AppError('invalid_client', 'Client authentication failed', { headers: basicHeaders });
      if (!app.isActive) throw new AppError('invalid_client', 'The application is disabled', { headers: basicHeaders });
      if (!req.grantType) throw new AppError('invalid_request', 'grant_type is required');
      if (req.grantType !== 'client_credentials') throw new AppError('unsupported_grant_type', `grant_type ${req.grantType} is not supported; use client_credentials`);
      let scopes = app.scopes;
      if (req.scope !== undefined && req.scope !== null && req.scope.trim() !== '') {
        const asked = [...new Set(req.scope.trim().split(/\s+/))];
        const unknown = asked.find((s) => !(SCOPES as readonly string[]).includes(s));
        if (unknown) throw new AppError('invalid_scope', `Unknown scope ${unknown}`);
        const beyond = asked.find((s) => !app.scopes.includes(s));
        if (beyond) throw new AppError('invalid_scope', `Scope ${beyond} is not granted to this application`);
        scopes = asked;
      }
      const scope = scopes.join(' ');
      const { token, jti, iat, exp } = await tokens.sign({ sub: app.id, app_id: app.id, client_id: app.clientId, scope, token_type: 'app' }, audience, APP_TOKEN_TTL);
      await recordToken({ jti, appId: app.id, scope, issuedAt: new Date(iat * 1000).toISOString(), expiresAt: exp });
      return { accessToken: token, tokenType: 'Bearer', expiresIn: APP_TOKEN_TTL, scope };
    },

    /** Steps 2-3 of spec 1, 5.3 after the signature: the token must be an app token, not revoked, of an existing, active app. */
    async actorFromClaims(claims: TokenClaims): Promise<AppActor> {
      if (claims.aud !== audience || typeof claims.app_id !== 'string') throw new AppError('UNAUTHORIZED', 'The token is not an Open API token');
      if (revocations.isRevoked(claims.jti)) throw new AppError('UNAUTHORIZED', 'The token has been revoked');
      const app = loaded ? byId.get(claims.app_id) ?? await lookup('id', claims.app_id) : await lookup('id', claims.app_id);
      if (!app) throw new AppError('UNAUTHORIZED', 'The application no longer exists');
      if (!app.isActive) throw new AppError('FORBIDDEN', 'The application is disabled');
      return {
        kind: 'app', id: app.id, isAdmin: false, clientId: app.clientId,
        tokenScopes: String(claims.scope ?? '').split(' ').filter(Boolean), jti: claims.jti, exp: claims.exp,
      };
    },
  };
}

export type AppService = ReturnType<typeof createAppService>;
