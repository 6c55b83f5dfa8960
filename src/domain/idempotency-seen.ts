// Which Idempotency-Key rows may be in the database (SQLite, one process): Bloom filters, so that a fresh key (nearly
// every keyed write) is claimed without looking it up. The lookup is one indexed SELECT, yet measured in the service it
// cost some 50 µs per keyed write, a third of all the key added (issue 15, E2): a statement of its own, on cold caches.
//
// A "no" is certain, a "maybe" (a few in 1000 for a fresh key) costs the lookup. The keys go into generations, each a
// filter sized for the traffic the last one saw; a generation is dropped once every row it stands for has expired, so
// no filter outlives its rows by much. Until the rows that were already in the database have all been read into the
// filters (at start-up, in the background), every answer is "maybe".

/** About 0.2 % false positives per full generation (several generations are live at once). */
const BITS_PER_KEY = 14;
const PROBES = 9;
const MIN_CAPACITY = 4096;
/** A generation takes keys for at most this long, so its rows expire at nearly the same time. */
const GENERATION_MS = 60 * 60 * 1000;

interface Generation {
  bits: Uint32Array;
  capacity: number;
  count: number;
  startedAt: number;
  /** When the last row this generation stands for expires (ms): past it, the generation is dropped. */
  until: number;
}

/** Two 32-bit FNV-1a hashes of `text` (different offsets), combined for the probes as h1 + i * h2. */
function hashes(text: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  return [h1 >>> 0, (h2 | 1) >>> 0];
}

function probe(g: Generation, h1: number, h2: number, set: boolean): boolean {
  const size = g.bits.length * 32;
  for (let i = 0; i < PROBES; i++) {
    const bit = (h1 + Math.imul(i, h2)) >>> 0;
    const at = bit % size;
    const mask = 1 << (at & 31);
    if (set) g.bits[at >>> 5] |= mask;
    else if (!(g.bits[at >>> 5] & mask)) return false;
  }
  return true;
}

export function createSeenKeys(now: () => number = Date.now) {
  const generations: Generation[] = [];
  let loaded = false;

  const generation = (capacity: number): Generation => {
    const g = { bits: new Uint32Array(Math.ceil((capacity * BITS_PER_KEY) / 32)), capacity, count: 0, startedAt: now(), until: 0 };
    generations.push(g);
    return g;
  };

  return {
    /** Notes that a row for `id` may exist until `expiresAt` (ms). */
    add(id: string, expiresAt: number): void {
      const t = now();
      while (generations.length && generations[0].until < t) generations.shift();
      let g = generations[generations.length - 1];
      if (!g || g.count >= g.capacity || t - g.startedAt >= GENERATION_MS) {
        // Sized for twice what the last generation took, so a steady traffic fills about half of each.
        g = generation(Math.max(MIN_CAPACITY, 2 * (g?.count ?? 0)));
      }
      const [h1, h2] = hashes(id);
      probe(g, h1, h2, true);
      g.count++;
      g.until = Math.max(g.until, expiresAt);
    },
    /** False only when no row for `id` can be in the database. */
    mayHave(id: string): boolean {
      if (!loaded) return true;
      const [h1, h2] = hashes(id);
      const t = now();
      return generations.some((g) => g.until >= t && probe(g, h1, h2, false));
    },
    /** The rows found in the database are all added: from now on a "no" is certain. */
    loaded(): void {
      loaded = true;
    },
  };
}

export type SeenKeys = ReturnType<typeof createSeenKeys>;
