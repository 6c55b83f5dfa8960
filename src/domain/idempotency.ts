// Idempotency-Key (contract section 14): the first answer to a write is kept 24 h per actor and key, and a repeat gets
// it back instead of running again. One row per actor and key in `idempotency_keys`; on PostgreSQL it is claimed before
// the request runs (SQLite: see the last paragraph):
//
// - While the first request runs, `status` is null and `expires_at` is a lease (now + 60 s) that the request renews every
//   20 s. A row whose lease has passed belongs to a request that died (its process was killed): the next claim takes it.
//   The lease's value doubles as the claim's token: the renewal and the final write match on it, so a request that lost
//   its claim never overwrites the one that took it over.
// - When it has answered, the row holds the status, the headers worth replaying and the body, and `expires_at` moves to
//   24 h after the answer. A 5xx deletes the row instead: a retry runs again.
// - Expired rows are deleted lazily, at most once a minute per process, inside a claim's transaction (one indexed DELETE).
//
// The claim is one write transaction (an upsert that only overwrites an expired row, and a read of the row when it did
// not); write transactions are serialised on every engine, and across processes on PostgreSQL, so two repeats never
// both claim one key.
//
// SQLite is served by one process (WORKERS needs PostgreSQL), so there a running request's claim is kept in memory, its
// answer too once given (a repeat is replayed from there), and answers are written in the background, those of several
// requests in one transaction, into a file of their own on a thread (store.keptAnswers, sqlite-answer-file.ts): a keyed
// write costs the event loop no commit. A restart frees at once the keys of the requests it cut off; a crash loses the
// answers of the last moment (their retries run). A key is looked up only when in-memory filters of the keys that have
// rows cannot rule it out: a fresh key, nearly every keyed write, costs no read (idempotency-seen.ts).
import { and, eq, isNull, lt, lte, sql } from 'drizzle-orm';
import { first, type Db } from '../db/store.js';
import type { Deps } from './deps.js';
import { createSeenKeys } from './idempotency-seen.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a running request's claim lasts without renewal; renewed every third of it. */
export const IDEMPOTENCY_LEASE_MS = 60_000;
const PRUNE_EVERY_MS = 60_000;
/**
 * SQLite: how long an answer waits in memory for others to be written with it (see scheduleWrite). At 10 ms a keyed
 * write still paid a tenth of a commit of its own in the E2 bench (1.1 commits per request, when the answers were
 * written on the event loop); at 50 ms and 800 keyed writes a second, one commit holds some 40 answers, while a crash
 * still loses only the answers of the last moment.
 */
const WRITE_AFTER_MS = 50;
/** SQLite: rows read per query when the kept answers' keys are gathered at start-up. */
const LOAD_PAGE = 5000;

/** An answer as kept: the status, the headers to replay (never X-Request-Id) and the JSON body's text. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A claimed key: `finish` stores the answer (or drops the claim for a 5xx); call it exactly once. */
export interface IdempotencyClaim {
  outcome: 'claimed';
  finish(answer: KeptAnswer): Promise<void>;
}
export type IdempotencyBegin =
  | IdempotencyClaim
  /** The key's first request answered this, with the same method, path and body. */
  | { outcome: 'replay'; answer: KeptAnswer }
  /** The key's first request is still running. */
  | { outcome: 'running' }
  /** The key was used with another method, path or body. */
  | { outcome: 'reused' };

const iso = (ms: number) => new Date(ms).toISOString();

export function createIdempotency({ store }: Deps, opts: { leaseMs?: number; ttlMs?: number } = {}) {
  const { idempotencyKeys: keys } = store.schema;
  const leaseMs = opts.leaseMs ?? IDEMPOTENCY_LEASE_MS;
  const ttlMs = opts.ttlMs ?? IDEMPOTENCY_TTL_MS;
  let prunedAt = 0;

  /** The row of `actor` and `key` while `lease` is its lease: the claim still belongs to whoever holds that lease. */
  const held = (actor: string, key: string, lease: string) =>
    and(eq(keys.actor, actor), eq(keys.key, key), isNull(keys.status), eq(keys.expiresAt, lease));

  // The claim and the kept answer run on every write that has a key: prepared once per connection (drizzle would build
  // them anew each time). Placeholders are wrapped in sql`` so the values go in as given (headers as JSON text).
  const p = (name: string) => sql`${sql.placeholder(name)}`;
  const claimKey = (db: Db) => db.insert(keys)
    .values({ actor: p('actor'), key: p('key'), fingerprint: p('fingerprint'), status: null, headers: null, body: null, expiresAt: p('lease') })
    // An existing row is taken over only once it has expired (a kept answer past 24 h, or a dead request's lease).
    .onConflictDoUpdate({
      target: [keys.actor, keys.key],
      set: { fingerprint: p('fingerprint'), status: null, headers: null, body: null, expiresAt: p('lease') },
      setWhere: lte(keys.expiresAt, p('now')),
    })
    .returning({ key: keys.key }).prepare();
  const keepAnswer = (db: Db) => db.update(keys)
    .set({ status: p('status'), headers: p('headers'), body: p('body'), expiresAt: p('expiresAt') })
    .where(and(eq(keys.actor, p('actor')), eq(keys.key, p('key')), isNull(keys.status), eq(keys.expiresAt, p('lease')))).prepare();

  /**
   * SQLite only (see the header): the keys of this process's requests by actor and key, with their fingerprints, and
   * their answers once given until they are written. Answers are written in the background, several per transaction.
   */
  const answerFile = store.keptAnswers;
  const inMemory = answerFile ? new Map<string, { fingerprint: string; answer?: KeptAnswer }>() : undefined;
  const unwritten: Array<{ id: string; actor: string; key: string; fingerprint: string; answer: KeptAnswer; at: number }> = [];
  let writing: Promise<void> | undefined;
  /** SQLite: which keys may have a row, so that a fresh key is not looked up (see idempotency-seen.ts). */
  const seen = inMemory ? createSeenKeys() : undefined;
  // The rows of earlier runs go into `seen` in the background, a page at a time; until then every key is looked up.
  if (seen && answerFile) {
    void (async () => {
      let after: { actor: string; key: string } | undefined;
      for (;;) {
        await new Promise(setImmediate); // a page per turn: requests go on meanwhile
        const page = answerFile.liveKeys(iso(Date.now()), after, LOAD_PAGE);
        for (const r of page) seen.add(`${r.actor}\n${r.key}`, Date.parse(r.expiresAt));
        if (page.length < LOAD_PAGE) break;
        after = page[page.length - 1];
      }
      seen.loaded();
    })().catch((e) => console.error('reading the kept Idempotency-Key answers failed (every key is looked up instead):', e));
  }

  let timer: NodeJS.Timeout | undefined;
  /**
   * Writes the answers a little later rather than at once: started at once, a write would hold one answer (the next
   * finishes while it commits), so a keyed request would cost a commit and a message to the thread of its own. Waiting
   * WRITE_AFTER_MS gathers the answers of several requests into one commit.
   */
  function scheduleWrite(claims: Map<string, { fingerprint: string; answer?: KeptAnswer }>) {
    timer ??= setTimeout(() => void writeAnswers(claims), WRITE_AFTER_MS);
  }
  /**
   * Writes the answers given so far in one transaction on the answer file's thread; answers given meanwhile wait for the
   * next round, WRITE_AFTER_MS later (writing them at once would send the thread a round of one or two answers each
   * time, and each round costs the event loop its messages). Resolves when the round under way (if any) is done.
   */
  function writeAnswers(claims: Map<string, { fingerprint: string; answer?: KeptAnswer }>): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (!writing && unwritten.length) {
      const batch = unwritten.splice(0);
      const now = Date.now();
      const prune = now - prunedAt >= PRUNE_EVERY_MS;
      if (prune) prunedAt = now;
      writing = answerFile!.write(batch.map((u) => ({
        actor: u.actor, key: u.key, fingerprint: u.fingerprint, status: u.answer.status, headers: JSON.stringify(u.answer.headers), body: u.answer.body,
        expiresAt: iso(u.at + ttlMs),
      })), iso(now), prune)
        .catch((e) => console.error('keeping the answers of Idempotency-Key requests failed:', e))
        .finally(() => {
          for (const u of batch) if (claims.get(u.id)?.answer === u.answer) claims.delete(u.id);
          writing = undefined;
          if (unwritten.length) scheduleWrite(claims);
        });
    }
    return writing ?? Promise.resolve();
  }

  /** What a kept (or, on PostgreSQL, claimed) row says about a request of `fingerprint`. */
  function answerOf(row: { fingerprint: string; status: number | null; headers: Record<string, string> | null; body: string | null }, fingerprint: string): IdempotencyBegin {
    if (row.fingerprint !== fingerprint) return { outcome: 'reused' };
    if (row.status === null || row.body === null) return { outcome: 'running' };
    return { outcome: 'replay', answer: { status: Number(row.status), headers: row.headers ?? {}, body: row.body } };
  }

  async function beginInMemory(claims: Map<string, { fingerprint: string; answer?: KeptAnswer }>, actor: string, key: string, fingerprint: string): Promise<IdempotencyBegin> {
    const id = `${actor}\n${key}`;
    const inFlight = () => {
      const entry = claims.get(id);
      return entry && answerOf({ fingerprint: entry.fingerprint, status: entry.answer?.status ?? null, headers: entry.answer?.headers ?? null, body: entry.answer?.body ?? null }, fingerprint);
    };
    const before = inFlight();
    if (before) return before;
    // Looked up only when `seen` cannot rule a row out (for a fresh key it nearly always can). The answers not yet
    // written are still in `claims`, found above.
    const row = seen!.mayHave(id) ? answerFile!.find(actor, key) : undefined;
    // Another request may have claimed the key while the row was read.
    const meanwhile = inFlight();
    if (meanwhile) return meanwhile;
    if (row && row.expiresAt > iso(Date.now())) return answerOf(row, fingerprint);
    const entry: { fingerprint: string; answer?: KeptAnswer } = { fingerprint };
    claims.set(id, entry);
    return {
      outcome: 'claimed',
      async finish(answer) {
        if (answer.status >= 500) {
          claims.delete(id);
          return;
        }
        // Replayed from memory at once; written with others shortly after (a crash in between loses it: a retry runs).
        entry.answer = answer;
        const at = Date.now();
        unwritten.push({ id, actor, key, fingerprint, answer, at });
        seen!.add(id, at + ttlMs);
        scheduleWrite(claims);
      },
    };
  }

  function claimed(actor: string, key: string, firstLease: string): IdempotencyClaim {
    let lease = firstLease;
    let renewing: Promise<void> = Promise.resolve();
    let lost = false;
    const renew = () => {
      renewing = renewing.then(async () => {
        if (lost) return;
        const next = iso(Date.now() + leaseMs);
        const rows = await store.transaction((tx) => tx.db.update(keys).set({ expiresAt: next }).where(held(actor, key, lease)).returning({ key: keys.key }));
        if (rows.length) lease = next;
        else lost = true;
      }).catch((e) => console.error('renewing an Idempotency-Key claim failed:', e));
    };
    const timer = setInterval(renew, Math.max(1, Math.floor(leaseMs / 3)));
    timer.unref();
    return {
      outcome: 'claimed',
      async finish(answer) {
        clearInterval(timer);
        await renewing;
        if (lost) return;
        await store.transaction(async (tx) => {
          if (answer.status >= 500) await tx.db.delete(keys).where(held(actor, key, lease));
          else {
            await tx.prepared(keepAnswer).execute({
              status: answer.status, headers: JSON.stringify(answer.headers), body: answer.body, expiresAt: iso(Date.now() + ttlMs), actor, key, lease,
            });
          }
        });
      },
    };
  }

  return {
    /** Resolves once every answer given so far is written (before the database closes). */
    async flush() {
      while (inMemory && (writing || unwritten.length)) await writeAnswers(inMemory);
    },
    /**
     * Claims `key` for `actor` (e.g. `user:usr...`) and a request of `fingerprint` (method, path and body), or says why
     * not: the kept answer to replay, the first request still running, or the key used for another request.
     */
    async begin(actor: string, key: string, fingerprint: string): Promise<IdempotencyBegin> {
      if (inMemory) return beginInMemory(inMemory, actor, key, fingerprint);
      const now = Date.now();
      const nowText = iso(now);
      const lease = iso(now + leaseMs);
      const prune = now - prunedAt >= PRUNE_EVERY_MS;
      if (prune) prunedAt = now;
      const found = await store.transaction(async (tx) => {
        if (prune) await tx.db.delete(keys).where(lt(keys.expiresAt, nowText));
        const won = await tx.prepared(claimKey).execute({ actor, key, fingerprint, lease, now: nowText });
        if (won.length) return { won: true as const };
        return { won: false as const, row: await first(tx.db.select().from(keys).where(and(eq(keys.actor, actor), eq(keys.key, key)))) };
      });
      if (found.won) return claimed(actor, key, lease);
      // Not there although the claim found it taken: cannot happen while claims take turns; ask for a retry.
      return found.row ? answerOf(found.row, fingerprint) : { outcome: 'running' };
    },
  };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
