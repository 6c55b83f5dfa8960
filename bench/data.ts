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

/**
 * Keyword-search terms (workload T4). The rare word sits in exactly RARE_RECORDS records spread evenly over a seeded
 * table (by position, so it does not depend on the table's size); the common word in about COMMON_SHARE of them
 * (one PRNG draw per record). Neither is a substring of anything else the generator writes.
 */
export const RARE_WORD = 'zephyrine';
export const RARE_RECORDS = 10;
export const COMMON_WORD = 'meadowlark';
export const COMMON_SHARE = 0.3;

/** Whether record number `index` of a table of `total` seeded records carries the rare word. */
export function isRare(index: number, total: number): boolean {
  if (index < 0 || total < RARE_RECORDS) return false;
  const every = Math.floor(total / RARE_RECORDS);
  return index % every === Math.floor(every / 2) && Math.floor(index / every) < RARE_RECORDS;
}

export const codeValue = (i: number) => `C${String(i).padStart(4, '0')}`;
export const regionValue = (i: number) => `R${String(i).padStart(4, '0')}`;

const DAY = 86_400_000;
const EPOCH_2020 = Date.UTC(2020, 0, 1);

/** One record's values; `index` and `total` (its position in the seeded table and the table's size) place the rare word. */
export function record(r: Prng, index = -1, total = 0): Record<string, unknown> {
  const words = (n: number) => Array.from({ length: n }, () => r.pick(WORDS)).join(' ');
  const rec: Record<string, unknown> = {
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
  if (r.next() < COMMON_SHARE) rec.notes += ` ${COMMON_WORD}`;
  if (isRare(index, total)) rec.notes += ` ${RARE_WORD}`;
  return rec;
}

/** The JSON body of one batch-create request of `n` records, the first being record number `start` of `total`. */
export function batchBody(r: Prng, n: number, start = 0, total = 0): string {
  return JSON.stringify({ action: 'create', records: Array.from({ length: n }, (_, i) => ({ fields: record(r, start + i, total) })) });
}
