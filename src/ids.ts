// Prefixed random identifiers (usr, bse, tbl, fld, rec, ...) and ISO timestamps.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix = 'usr' | 'bse' | 'tbl' | 'fld' | 'rec' | 'wfl' | 'run' | 'stp' | 'aud';

/** 16 base62 characters after the prefix: about 95 bits of randomness. */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(16);
  let out = prefix;
  for (let i = 0; i < 16; i++) out += ALPHABET[bytes[i] % 62];
  return out;
}

export function nowIso(): string {
  return new Date().toISOString();
}
