// Login throttling: repeated failed logins are slowed down per email and per client address. The waiting rule and the
// refusal live here for both implementations: the in-process one below (SQLite, bounded memory that never forgets an
// active lockout) and the PostgreSQL one shared by every process (src/db/pg-limits.ts).
import ipaddr from 'ipaddr.js';
import { AppError } from '../errors.js';

export const FAILURE_WINDOW_MS = 15 * 60_000;
/** Free failures in the window per email; per address more, since one office or NAT address serves many people. */
export const FREE_FAILURES_PER_EMAIL = 5;
export const FREE_FAILURES_PER_ADDRESS = 50;
export const DEFAULT_THROTTLE_CAPACITY = 100_000;

/**
 * The login throttle's interface, asynchronous so a shared (PostgreSQL-backed) store can replace the in-process one when
 * several processes serve logins. Addresses are given as the caller's; the throttle counts them by throttleAddress.
 */
export interface LoginThrottle {
  /** Rejects with RATE_LIMITED (with Retry-After) while the email or the address must wait. */
  check(email: string, address: string): Promise<void>;
  fail(email: string, address: string): Promise<void>;
  succeed(email: string, address: string): Promise<void>;
}

/** A key's failures: how many within the window, and when the last one was (ms). */
export interface FailureEntry {
  count: number;
  last: number;
}

/**
 * The waiting rule: after `free` failures within the window each further attempt waits 2^(n-free) seconds after the
 * last failure, at most the window; a last failure older than the window counts for nothing. Milliseconds, 0 = may try.
 */
export function failureWaitMs(e: FailureEntry | undefined, free: number, now: number): number {
  if (!e || now - e.last > FAILURE_WINDOW_MS || e.count < free) return 0;
  return Math.max(0, e.last + Math.min(2 ** (e.count - free) * 1000, FAILURE_WINDOW_MS) - now);
}

/** The count after one more failure at `now`: a failure after a quiet window starts again from one. */
export function nextFailureCount(e: FailureEntry | undefined, now: number): number {
  return !e || now - e.last > FAILURE_WINDOW_MS ? 1 : e.count + 1;
}

/** Throws the RATE_LIMITED answer when either the email or the address must still wait (milliseconds). */
export function refuseWhileWaiting(byEmail: number, byAddress: number): void {
  if (!byEmail && !byAddress) return;
  const seconds = Math.ceil(Math.max(byEmail, byAddress) / 1000);
  const who = byEmail && byAddress ? 'for this email and from this address' : byEmail ? 'for this email' : 'from this address';
  throw new AppError('RATE_LIMITED', `Too many failed logins ${who}; try again in ${seconds} s`, { headers: { 'Retry-After': String(seconds) } });
}

/**
 * The address a throttle counts: IPv4-mapped IPv6 as IPv4, and IPv6 by its /64, since one customer usually gets a
 * whole /64 and could otherwise change address with every attempt. Anything else (a test's "local") as given.
 */
export function throttleAddress(address: string): string {
  const a = String(address ?? '').trim();
  if (!ipaddr.isValid(a)) return a.toLowerCase();
  const parsed = ipaddr.process(a);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

/**
 * Failures per key (one map per email, one per address), counted and waited on by the rule above. An entry whose last
 * failure is older than the window is forgotten.
 *
 * Memory is at most `capacity` entries plus one. When a new key arrives at a full map, expired entries go first, then
 * entries still under the free allowance, oldest first (they only lose the attacker a few free tries). An entry at or
 * over the allowance within the window is never evicted: it either forces a wait now, or its count decides how long
 * the next failure waits, and forgetting it would hand out fresh free tries.
 *
 * If every entry is such an entry, the new key is not added. Its failures are counted instead in one shared overflow
 * entry that every untracked key is checked against: refusing to track it at all would let an attacker who filled
 * the map guess freely on any other email, and locking out every untracked key outright would let that same attacker
 * lock everyone out. The overflow entry throttles all untracked keys together, so while the map is full of lockouts a
 * new email may be slowed down by failures on other emails; that only happens during an attack, lasts at most one
 * window, and costs no memory.
 */
class FailureCounter {
  private readonly entries = new Map<string, FailureEntry>(); // in order of last failure, oldest first (see fail)
  private overflow: FailureEntry | undefined;
  /** After a sweep that freed nothing, no entry can become evictable before this time, so full-map inserts skip sweeping. */
  private noRoomUntil = 0;

  constructor(private readonly free: number, private readonly capacity: number, private readonly now: () => number) {}

  /** Milliseconds the key must still wait, 0 when it may try. */
  waitMs(key: string): number {
    return failureWaitMs(this.entries.get(key) ?? this.overflow, this.free, this.now());
  }

  fail(key: string) {
    const now = this.now();
    const e = this.entries.get(key);
    if (e) {
      // Moved to the end, so the map stays in order of last failure and eviction can take the oldest first.
      this.entries.delete(key);
      this.entries.set(key, { count: nextFailureCount(e, now), last: now });
      return;
    }
    if (this.entries.size >= this.capacity && now >= this.noRoomUntil) this.makeRoom(now);
    if (this.entries.size >= this.capacity) {
      this.overflow = { count: nextFailureCount(this.overflow, now), last: now };
      return;
    }
    this.entries.set(key, { count: 1, last: now });
    this.noRoomUntil = 0; // the new entry is under the allowance, so evictable
  }

  succeed(key: string) {
    // Only the key's own entry: a success says nothing about the other keys sharing the overflow entry.
    this.entries.delete(key);
  }

  private makeRoom(now: number) {
    let oldestKept = Infinity;
    for (const [k, e] of this.entries) {
      if (now - e.last > FAILURE_WINDOW_MS) this.entries.delete(k);
      else oldestKept = Math.min(oldestKept, e.last);
    }
    // Under-allowance entries go in a small batch, so a flood of new keys sweeps once per batch rather than per key.
    const target = this.capacity - Math.max(1, Math.floor(this.capacity / 100));
    for (const [k, e] of this.entries) {
      if (this.entries.size <= target) break;
      if (e.count < this.free) this.entries.delete(k);
    }
    if (this.entries.size >= this.capacity) this.noRoomUntil = oldestKept + FAILURE_WINDOW_MS + 1;
  }
}

const DONE = Promise.resolve();

/**
 * The in-process login throttle: failures per email (FREE_FAILURES_PER_EMAIL free) and per client address
 * (FREE_FAILURES_PER_ADDRESS free) within 15 minutes, then an exponential wait; at most `capacity` entries per map.
 * A successful login clears its email's failures but not its address's: otherwise an attacker holding one working
 * account could reset the address's count between guesses at other accounts.
 */
export function createLoginThrottle(opts: { capacity?: number; now?: () => number } = {}): LoginThrottle {
  const now = opts.now ?? Date.now;
  const capacity = opts.capacity ?? DEFAULT_THROTTLE_CAPACITY;
  const emails = new FailureCounter(FREE_FAILURES_PER_EMAIL, capacity, now);
  const addresses = new FailureCounter(FREE_FAILURES_PER_ADDRESS, capacity, now);
  return {
    check(email, address) {
      try {
        refuseWhileWaiting(emails.waitMs(email), addresses.waitMs(throttleAddress(address)));
        return DONE;
      } catch (e) {
        return Promise.reject(e);
      }
    },
    fail(email, address) {
      emails.fail(email);
      addresses.fail(throttleAddress(address));
      return DONE;
    },
    succeed(email) {
      emails.succeed(email);
      return DONE;
    },
  };
}
