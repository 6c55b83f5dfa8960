// Signs and checks short-lived URLs (the plugin sandbox loader and package files) with an HMAC key the store keeps.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../db/store.js';

export async function loadOrCreateUrlKey(store: Pick<Store, 'secret'>): Promise<Buffer> {
  return Buffer.from(await store.secret('url-signing-key', async () => randomBytes(32).toString('base64')), 'base64');
}

export function createUrlSigner(key: Buffer) {
  const mac = (parts: string[]) => createHmac('sha256', key).update(parts.join('\n')).digest('base64url');
  return {
    /** The signature of `parts` valid until `exp` (seconds). */
    sign(parts: string[], exp: number): string {
      return mac([...parts, String(exp)]);
    },
    /** True when `sig` signs `parts` and `exp` has not passed. */
    verify(parts: string[], exp: number, sig: string | null): boolean {
      if (!sig || !Number.isInteger(exp) || exp < Math.floor(Date.now() / 1000)) return false;
      const expected = Buffer.from(mac([...parts, String(exp)]));
      const given = Buffer.from(sig);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export type UrlSigner = ReturnType<typeof createUrlSigner>;
