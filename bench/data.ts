// Deterministic bench data: a seeded PRNG, the 10-field table layout, and record/batch-body generators.
// Seeded so two runs (and the service and baseline sides of one run) write the same values.

/** mulberry32: tiny, fast, good enough for test data; same seed → same sequence on every platform. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)],
  };
}
export type Prng = ReturnType<typeof prng>;

/** Distinct values of the two eq-filter fields: at 1,000,000 records a value matches ~1,000 of them. */
export const DISTINCT = 1000;
export const STATUSES = ['todo', 'doing', 'review', 'done', 'blocked', 'archived'] as const;

/**
 * The table layout: 10 fields of mixed types. `code` (indexed) and `region` (not indexed) have the same
 * distribution so workloads 2 and 3 differ only by the index; `amount` is the non-indexed sort key.
 */
export const FIELDS = [
  { name: 'name', type: 'text' },
  { name: 'code', type: 'text', indexed: true },
  { name: 'region', type: 'text' },
  { name: 'amount', type: 'number' },
  { name: 'status', type: 'single_select', options: [...STATUSES] },
  { name: 'done', type: 'checkbox' },
  { name: 'due', type: 'date' },
  { name: 'email', type: 'email' },
  { name: 'rating', type: 'rating', config: { max: 5 } },
  { name: 'notes', type: 'long_text' },
];

const WORDS = [
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike',
  'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango', 'uniform', 'victor', 'whiskey', 'xray', 'yankee', 'zulu',
];

export const codeValue = (i: number) => `C${String(i).padStart(4, '0')}`;
export const regionValue = (i: number) => `R${String(i).padStart(4, '0')}`;

const DAY = 86_400_000;
const EPOCH_2020 = Date.UTC(2020, 0, 1);

export function record(r: Prng): Record<string, unknown> {
  const words = (n: number) => Array.from({ length: n }, () => r.pick(WORDS)).join(' ');
  return {
    name: `${words(2)} ${r.int(100000)}`,
    code: codeValue(r.int(DISTINCT)),
    region: regionValue(r.int(DISTINCT)),
    amount: Math.round(r.next() * 1_000_000) / 100,
    // A few empty cells, so "empty sorts last" and null mapping are exercised too.
    status: r.next() < 0.05 ? null : r.pick(STATUSES),
    done: r.next() < 0.5,
    due: new Date(EPOCH_2020 + r.int(2000) * DAY).toISOString().slice(0, 10),
    email: `${r.pick(WORDS)}.${r.int(100000)}@example.com`,
    rating: r.int(6),
    notes: words(5 + r.int(20)),
  };
}

/** The JSON body of one batch-create request of `n` records. */
export function batchBody(r: Prng, n: number): string {
  return JSON.stringify({ action: 'create', records: Array.from({ length: n }, () => ({ fields: record(r) })) });
}
