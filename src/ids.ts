// Prefixed random identifiers (usr, bse, tbl, fld, rec, ...) and ISO timestamps.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix = 'usr' | 'bse' | 'tbl' | 'fld' | 'rec' | 'wfl' | 'run' | 'stp' | 'aud';

// Random bytes are drawn in blocks: one system call per 256 ids instead of one per id (batch writes make thousands).
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/** 16 base62 characters after the prefix: about 95 bits of randomness. */
export function newId(prefix: IdPrefix): string {
  if (offset + 16 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  let out = prefix;
  for (let i = 0; i < 16; i++) out += ALPHABET[pool[offset + i] % 62];
  offset += 16;
  return out;
}

export function nowIso(): string {
  return new Date().toISOString();
}
