// Issues and verifies signed JWTs; verified tokens are cached so a client that reuses its token pays no signature check.
import { jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { KeyObject, randomUUID, sign as edSign } from 'node:crypto';
import type { SigningKeys } from './keys.js';

export interface TokenClaims extends JWTPayload {
  sub: string;
  jti: string;
  exp: number;
  iat: number;
  token_type: 'user' | 'app';
  [claim: string]: unknown;
}

export type VerifyResult = { ok: true; claims: TokenClaims } | { ok: false; reason: 'invalid' | 'expired' };

const CACHE_LIMIT = 10_000;

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

export function createTokenService(keys: SigningKeys, issuer: string) {
  // token string -> claims; entries are dropped when expired or when the cache is full.
  const verified = new Map<string, TokenClaims>();
  // Signing is a plain compact JWS (RFC 7515) made with node:crypto's synchronous Ed25519: jose signs through
  // WebCrypto's thread pool, which costs a round trip per token; tokens are still verified by jose.
  const privateKey = KeyObject.from(keys.privateKey);
  const header = b64url(JSON.stringify({ alg: keys.alg, kid: keys.kid, typ: 'JWT' }));

  return {
    async sign(claims: Record<string, unknown> & { sub: string; token_type: 'user' | 'app' }, audience: string, ttlSeconds: number) {
      const jti = randomUUID();
      const iat = Math.floor(Date.now() / 1000);
      const payload = b64url(JSON.stringify({ ...claims, jti, iss: issuer, aud: audience, iat, exp: iat + ttlSeconds }));
      const input = `${header}.${payload}`;
      const token = `${input}.${b64url(edSign(null, Buffer.from(input), privateKey))}`;
      return { token, jti, iat, exp: iat + ttlSeconds };
    },

    /** Checks signature, algorithm, key id, issuer and expiry; the caller checks the audience for the token type. */
    async verify(token: string): Promise<VerifyResult> {
      const now = Math.floor(Date.now() / 1000);
      const cached = verified.get(token);
      if (cached) {
        if (cached.exp > now) return { ok: true, claims: cached };
        verified.delete(token);
        return { ok: false, reason: 'expired' };
      }
      try {
        const { payload, protectedHeader } = await jwtVerify(token, keys.publicKey, {
          issuer,
          algorithms: [keys.alg],
          requiredClaims: ['sub', 'jti', 'exp', 'iat', 'aud', 'token_type'],
        });
        if (protectedHeader.kid !== keys.kid) return { ok: false, reason: 'invalid' };
        const claims = payload as TokenClaims;
        if (verified.size >= CACHE_LIMIT) verified.clear();
        verified.set(token, claims);
        return { ok: true, claims };
      } catch (e) {
        return { ok: false, reason: e instanceof joseErrors.JWTExpired ? 'expired' : 'invalid' };
      }
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
