// Keeps keyword-search indexes caught up in the background, so record writes pay no tokenizing;
// a search first catches its table up, so it always sees every committed write.
import type { UnitOfWork } from '../db/store.js';
import type { Deps } from './deps.js';
import type { FieldDef } from '../fields/field-type.js';
import type { ActivityMonitor } from './activity.js';

const CHUNK = 2000;
const DELAY_MS = 50;
/** Requests come first: the indexer waits for this much quiet, but runs a chunk at least this often. */
const QUIET_MS = 100;
const MAX_WAIT_MS = 1000;
/**
 * Between requests (none in flight, another may be on its way) it runs a chunk this small, a few milliseconds, once a
 * table has that many rows to index: a client writing batch after batch leaves the server idle while it reads each
 * answer and sends the next. A step for fewer rows would cost single writes more than it saves (a step is a transaction).
 */
const GAP_CHUNK = 250;

export function createSearchIndexer({ store }: Deps, loadFields: (uow: UnitOfWork, tableId: string) => Promise<FieldDef[]>, activity: ActivityMonitor) {
  const pending = new Set<string>();
  /** Writes noted per table: a sync may forget a table only if none was noted while it ran (it runs beside writes). */
  const touches = new Map<string, number>();
  /** Rows written per table that its index may not hold yet, as touch counted them (Infinity where not counted). */
  const backlog = new Map<string, number>();
  /** A table whose index holds every write noted for it, or that is gone: nothing left to do for it. */
  const settle = (tableId: string) => {
    pending.delete(tableId);
    backlog.delete(tableId);
  };
  const gapWorthIt = () => {
    const [tableId] = pending;
    return tableId !== undefined && (backlog.get(tableId) ?? 0) >= GAP_CHUNK;
  };
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
    const due = activity.sinceLastRequest() >= QUIET_MS || now - lastChunk >= MAX_WAIT_MS;
    if (!due && !(activity.idle() && gapWorthIt())) return QUIET_MS;
    const rows = due ? CHUNK : GAP_CHUNK;
    if (due) lastChunk = now;
    const touched = touches.get(tableId);
    try {
      // Beside the write lock on PostgreSQL: filling the trigram index takes long, and record writes wait only where they
      // change text a sync may be indexing (record-store/search-index.ts).
      await store.transaction(async (tx) => {
        const more = await tx.records.syncSearch(tableId, await loadFields(tx, tableId), rows);
        // A write that committed while this ran may be above what it saw: the table stays pending then.
        if (!more) tx.afterCommit(() => {
          if (touches.get(tableId) === touched) settle(tableId);
        });
        else tx.afterCommit(() => backlog.set(tableId, Math.max(0, (backlog.get(tableId) ?? 0) - rows)));
      }, { writeLock: false });
    } catch (e) {
      settle(tableId); // the table was deleted meanwhile, or the next write will schedule it again
      touches.delete(tableId);
      if (!stopped && !/no such table|does not exist/.test(String(e))) console.error('search indexing failed:', e);
    }
    return 0;
  }

  // A gap between requests: a step waiting for quiet runs now (after the answer's I/O), with a small chunk.
  activity.onIdle(() => {
    if (!timer || running || stopped || !gapWorthIt()) return;
    clearTimeout(timer);
    timer = null;
    setImmediate(() => schedule(0));
  });

  return {
    /** Notes that `rows` records of a table had their search text changed (called once the write has committed). */
    touch(tableId: string, rows = Infinity) {
      pending.add(tableId);
      touches.set(tableId, (touches.get(tableId) ?? 0) + 1);
      backlog.set(tableId, (backlog.get(tableId) ?? 0) + rows);
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
      for (const id of tableIds) {
        pending.add(id);
        backlog.set(id, Infinity);
      }
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
