// Signs and checks short-lived URLs (the plugin sandbox loader and package files) with an HMAC key kept in DATA_DIR.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export function loadOrCreateUrlKey(dataDir: string): Buffer {
  const file = path.join(dataDir, 'url-signing.key');
  if (!fs.existsSync(file)) fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  return Buffer.from(fs.readFileSync(file, 'utf8'), 'base64');
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
