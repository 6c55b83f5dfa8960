// Keeps keyword-search indexes caught up in the background, so record writes pay no tokenizing;
// a search first catches its table up, so it always sees every committed write.
import { writeTransaction } from '../db/connection.js';
import type { Deps } from './deps.js';
import type { FieldDef } from '../fields/field-type.js';
import type { ActivityMonitor } from './activity.js';

const CHUNK = 2000;
const DELAY_MS = 50;
/** Requests come first: the indexer waits for this much quiet, but runs a chunk at least this often. */
const QUIET_MS = 100;
const MAX_WAIT_MS = 1000;

export function createSearchIndexer({ sqlite, store }: Deps, loadFields: (tableId: string) => FieldDef[], activity: ActivityMonitor) {
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let lastChunk = Date.now();

  function schedule(delay = DELAY_MS) {
    if (timer || stopped || pending.size === 0) return;
    timer = setTimeout(step, delay);
    timer.unref();
  }

  /** One chunk of one table per turn of the event loop, so requests keep flowing while a big table is indexed. */
  function step() {
    timer = null;
    const [tableId] = pending;
    if (!tableId) return;
    const now = Date.now();
    if (activity.sinceLastRequest() < QUIET_MS && now - lastChunk < MAX_WAIT_MS) return schedule(QUIET_MS);
    lastChunk = now;
    try {
      const more = writeTransaction(sqlite, () => {
        const fields = loadFields(tableId);
        return store.syncSearch(tableId, fields, CHUNK);
      });
      if (!more) pending.delete(tableId);
    } catch (e) {
      pending.delete(tableId); // the table was deleted meanwhile, or the next write will schedule it again
      if (!/no such table/.test(String(e))) console.error('search indexing failed:', e);
    }
    schedule(0);
  }

  return {
    /** Notes that a table's search text changed. */
    touch(tableId: string) {
      pending.add(tableId);
      schedule();
    },
    /** Whether a table has writes its search index has not caught up with (every write path calls touch). */
    isPending: (tableId: string) => pending.has(tableId),
    /** Inside a write transaction: brings one table fully up to date (before a search). */
    catchUp(tableId: string, fields: FieldDef[]) {
      while (store.syncSearch(tableId, fields, 50_000));
      pending.delete(tableId);
    },
    /** At start: every table may have rows left from before a restart. */
    touchAll(tableIds: string[]) {
      for (const id of tableIds) pending.add(id);
      schedule();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

export type SearchIndexer = ReturnType<typeof createSearchIndexer>;
