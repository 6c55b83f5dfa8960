// Small answers that requests read by key (a request's user, its table, the table's base, the count of a filter), kept
// between requests while nothing has committed since they were read (Store.readVersion): what the database would answer.
import type { Store } from './store.js';

/** Keys kept at most; past it the cache starts over (the rows are small, the keys few in practice). */
const MAX_KEYS = 10_000;

/**
 * Answers kept by key, each read by the function given with its call (a count of a filter, say). Use it only for reads
 * outside transactions: it knows nothing of uncommitted changes. The answers are frozen, since every caller shares them.
 */
export function readThrough<T>(store: Pick<Store, 'readVersion'>): (key: string, read: () => Promise<T>) => Promise<T> {
  const kept = new Map<string, T>();
  let keptAt: number | null = null;
  return async (key, read) => {
    const version = await store.readVersion();
    if (version !== keptAt) {
      kept.clear();
      keptAt = version;
    }
    if (kept.has(key)) return kept.get(key)!;
    const value = await read();
    // A commit between the version read above and this read may be in the answer or not: keep only what no commit raced.
    if ((await store.readVersion()) === version) {
      if (kept.size >= MAX_KEYS) kept.clear();
      kept.set(key, value !== null && typeof value === 'object' ? Object.freeze(value) : value);
    }
    return value;
  };
}

/** `readThrough` with one reader for every key (a row by its id). */
export function readCache<T>(store: Pick<Store, 'readVersion'>, read: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const through = readThrough<T>(store);
  return (key) => through(key, () => read(key));
}
