// Keeps keyword-search indexes caught up in the background, so record writes pay no tokenizing;
// a search first catches its table up, so it always sees every committed write.
import type { UnitOfWork } from '../db/store.js';
import type { Deps } from './deps.js';
import type { FieldDef } from '../fields/field-type.js';
import type { ActivityMonitor } from './activity.js';

const CHUNK = 2000;
const DELAY_MS = 50;
/**
 * Requests come first: the indexer waits for this much quiet, but runs a chunk at least this often. It does not use the
 * short gaps between one client's requests (a client writing batch after batch): a chunk there held up each next batch
 * and took 9-21 % off the batch-create rate on SQLite, and the table's index was no sooner current for it (README,
 * Performance).
 */
const QUIET_MS = 100;
const MAX_WAIT_MS = 1000;

export function createSearchIndexer({ store }: Deps, loadFields: (uow: UnitOfWork, tableId: string) => Promise<FieldDef[]>, activity: ActivityMonitor) {
  const pending = new Set<string>();
  /** Writes noted per table: a sync may forget a table only if none was noted while it ran (it runs beside writes). */
  const touches = new Map<string, number>();
  /** A table whose index holds every write noted for it, or that is gone: nothing left to do for it. */
  const settle = (tableId: string) => pending.delete(tableId);
  let timer: NodeJS.Timeout | null = null;
  /** The step under way: one at a time, the next is scheduled only once it has settled. */
  let running: Promise<void> | null = null;
  let stopped = false;
  let lastChunk = Date.now();

  function schedule(delay = DELAY_MS) {
    if (timer || running || stopped || pending.size === 0) return;
    timer = setTimeout(() => {
      timer = null;
      running = step().then((next) => {
        running = null;
        schedule(next);
      });
    }, delay);
    timer.unref();
  }

  /**
   * One chunk of one table per turn of the event loop, so requests keep flowing while a big table is indexed.
   * Resolves (never rejects) with the delay before the next step.
   */
  async function step(): Promise<number> {
    const [tableId] = pending;
    if (!tableId) return DELAY_MS;
    const now = Date.now();
    if (activity.sinceLastRequest() < QUIET_MS && now - lastChunk < MAX_WAIT_MS) return QUIET_MS;
    lastChunk = now;
    const touched = touches.get(tableId);
    try {
      // Beside the write lock on PostgreSQL: filling the trigram index takes long, and record writes wait only where they
      // change text a sync may be indexing (record-store/search-index.ts).
      await store.transaction(async (tx) => {
        const more = await tx.records.syncSearch(tableId, await loadFields(tx, tableId), CHUNK);
        // A write that committed while this ran may be above what it saw: the table stays pending then.
        if (!more) tx.afterCommit(() => {
          if (touches.get(tableId) === touched) settle(tableId);
        });
      }, { writeLock: false });
    } catch (e) {
      settle(tableId); // the table was deleted meanwhile, or the next write will schedule it again
      touches.delete(tableId);
      if (!stopped && !/no such table|does not exist/.test(String(e))) console.error('search indexing failed:', e);
    }
    return 0;
  }

  return {
    /** Notes that records of a table had their search text changed (called once the write has committed). */
    touch(tableId: string) {
      pending.add(tableId);
      touches.set(tableId, (touches.get(tableId) ?? 0) + 1);
      schedule();
    },
    /** Whether a table has writes its search index has not caught up with (every write path calls touch). */
    isPending: (tableId: string) => pending.has(tableId),
    /** Inside a write transaction: brings one table fully up to date (before a search). */
    async catchUp(tx: UnitOfWork, tableId: string, fields: FieldDef[]): Promise<void> {
      while (await tx.records.syncSearch(tableId, fields, 50_000));
      tx.afterCommit(() => settle(tableId));
    },
    /** At start: every table may have rows left from before a restart. */
    touchAll(tableIds: string[]) {
      for (const id of tableIds) pending.add(id);
      schedule();
    },
    /** Stops indexing; resolves once a step under way has settled, so the store may then be closed. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}

export type SearchIndexer = ReturnType<typeof createSearchIndexer>;
