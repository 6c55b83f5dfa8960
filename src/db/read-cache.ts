// Small rows that every request reads by key (its user, its table, the table's base), kept between requests while
// nothing at all has committed since they were read, so a cached row is always what the database would answer.
import type { Store } from './store.js';

/** Keys kept at most; past it the cache starts over (the rows are small, the keys few in practice). */
const MAX_KEYS = 10_000;

/**
 * `read` with its answers kept by key. Use it only for reads outside transactions: it knows nothing of uncommitted
 * changes. The answers are frozen, since every caller shares them; where the store cannot tell whether something
 * committed (`readVersion()` null: PostgreSQL), every call reads.
 */
export function readCache<T>(store: Pick<Store, 'readVersion'>, read: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const kept = new Map<string, T>();
  let keptAt: number | null = null;
  return async (key) => {
    const version = store.readVersion();
    if (version === null) return read(key);
    if (version !== keptAt) {
      kept.clear();
      keptAt = version;
    }
    if (kept.has(key)) return kept.get(key)!;
    const value = await read(key);
    // A commit between the version read above and this read may be in the answer or not: keep only what no commit raced.
    if (store.readVersion() === version) {
      if (kept.size >= MAX_KEYS) kept.clear();
      kept.set(key, value !== null && typeof value === 'object' ? Object.freeze(value) : value);
    }
    return value;
  };
}
