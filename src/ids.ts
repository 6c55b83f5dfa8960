// Prefixed random identifiers (usr, bse, tbl, fld, rec, ...) and ISO timestamps.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix = 'usr' | 'bse' | 'tbl' | 'fld' | 'rec' | 'wfl' | 'run' | 'stp' | 'aud' | 'evt' | 'whk' | 'dlv' | 'job' | 'viw' | 'att';

// Random bytes are drawn in blocks: one system call per 256 ids instead of one per id (batch writes make thousands).
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/**
 * 16 base62 characters after the prefix: 8 of the creation time in milliseconds, then 8 random (about 47 bits).
 * Time first keeps ids of new records at the end of the id index, so inserts into a big table append rather
 * than land at random places in the B-tree.
 */
export function newId(prefix: IdPrefix): string {
  if (offset + 8 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  let time = '';
  for (let t = Date.now(), i = 0; i < 8; i++, t = Math.floor(t / 62)) time = ALPHABET[t % 62] + time;
  let out = prefix + time;
  for (let i = 0; i < 8; i++) out += ALPHABET[pool[offset + i] % 62];
  offset += 8;
  return out;
}

export function nowIso(): string {
  return new Date().toISOString();
}

/** A spooled upload's id (rest-adapters/spool.ts): what an operation taking an upload accepts, never a path. */
export const UPLOAD_ID = /^upl_[A-Za-z0-9]{24}$/;
