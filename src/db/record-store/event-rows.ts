// The event log's rows (contract section 14) in plain SQL: every write appends its events inside its transaction, so
// the statements are built once per shape and skip drizzle's per-query building, as the record writes do.
import type { StoreContext } from './context.js';

/** One row of `events` (one event, or several of one write: src/domain/events.ts); `data` is stored as JSON text. */
export interface EventRow {
  id: string;
  baseId: string;
  seq: number;
  type: string;
  tableId: string | null;
  recordId: string | null;
  actorType: string;
  actorId: string | null;
  at: string;
  data: unknown;
  eventCount: number;
}

const COLUMNS = ['id', 'base_id', 'seq', 'type', 'table_id', 'record_id', 'actor_type', 'actor_id', 'at', 'data', 'event_count'];
const TYPES = ['text', 'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'json', 'bigint'];

export function eventRows(ctx: StoreContext) {
  const lastSeqSql = `SELECT max(seq) FROM events WHERE base_id = ${ctx.dialect.placeholder(1)}`;
  return {
    /** The highest `seq` of a base's events (0 when it has none); writes take turns, so the next is this plus one. */
    async lastEventSeq(baseId: string): Promise<number> {
      return Number((await ctx.scalar(lastSeqSql, [baseId])) ?? 0);
    },
    async insertEvents(rows: EventRow[]): Promise<void> {
      await ctx.insertRows('events', COLUMNS, rows.map((r) => [
        r.id, r.baseId, r.seq, r.type, r.tableId, r.recordId, r.actorType, r.actorId, r.at, JSON.stringify(r.data), r.eventCount,
      ]), TYPES, { scalarParameters: true }); // a batch's rows are few (EVENTS_PER_ROW events each) and their data long
    },
  };
}
