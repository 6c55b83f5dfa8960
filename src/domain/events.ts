// The event log (contract section 14): every change to records, fields and tables, written in the transaction of the
// change (an outbox), with its actor; read by cursor per base and pruned after EVENT_RETENTION_DAYS. One log feeds the
// events endpoint, subscriptions and webhooks, so none of them can see a change that rolled back or miss one that did not.
//
// A batch write's record events share one row of `events` (up to EVENTS_PER_ROW, of one type and table): a row per
// event cost a batch create of 100 records a quarter of its time, in row inserts and the pages they dirtied. Such a row
// has the seq of its last event, `event_count`, its records' ids in `record_id` (space-separated) and `data` as the list
// of its events' ids and data; every read below gives its events one by one, as if each had its own row.
import { aliasedTable, and, asc, eq, exists, gt, inArray, isNull, like, lt, lte, max, sql } from 'drizzle-orm';
import { first, type EventRow, type UnitOfWork } from '../db/store.js';
import { badRequest, forbidden } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { FieldDef } from '../fields/field-type.js';
import type { Actor, Deps } from './deps.js';
import type { ApiRecord } from './records.js';

export const EVENT_TYPES = [
  'record.created', 'record.updated', 'record.deleted', 'field.created', 'field.updated', 'field.deleted',
  'table.created', 'table.updated', 'table.deleted', 'view.created', 'view.updated', 'view.deleted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  type: EventType;
  tableId?: string | null;
  recordId?: string | null;
  data: Record<string, unknown>;
}

/** An event as the API shows it; `seq` is a string of digits, increasing within a base. */
export interface ApiEvent {
  id: string;
  seq: string;
  type: string;
  base_id: string;
  table_id: string | null;
  record_id: string | null;
  actor: { type: string; id: string | null };
  at: string;
  data: Record<string, unknown>;
}

/** A table and a field as events carry them. */
export const eventTable = (t: { id: string; name: string; description?: string | null }) => ({ id: t.id, name: t.name, description: t.description ?? null });
export const eventField = (f: FieldDef) => ({ id: f.id, name: f.name, type: f.type, required: f.required, options: f.options, config: f.config, indexed: f.indexed });

/** Events a subscription reads per query, and how often it looks without being woken. */
const STREAM_BATCH = 500;
const STREAM_POLL_MS = 1000;
/** Events deleted per transaction when pruning: a writer waits for one chunk at most. */
const PRUNE_CHUNK = 2000;
/** Record events of one write kept in one row at most (a list page never parses more than it must). */
const EVENTS_PER_ROW = 100;
/** Rows a list reads per query: enough for a page of single events, few enough of shared ones. */
const LIST_ROWS = 64;

const json = (v: unknown) => JSON.stringify(v ?? null);

/** The record events of one write: created/deleted records whole, updated ones by the fields whose value changed. */
export function recordEvents(tableId: string, kind: 'created' | 'updated' | 'deleted', records: ApiRecord[], before?: Map<string, ApiRecord>): NewEvent[] {
  if (kind === 'created') return records.map((r) => ({ type: 'record.created', tableId, recordId: r.id, data: { after: r.fields } }));
  if (kind === 'deleted') return records.map((r) => ({ type: 'record.deleted', tableId, recordId: r.id, data: { before: r.fields } }));
  const out: NewEvent[] = [];
  for (const r of records) {
    const was = before?.get(r.id)?.fields;
    if (!was) continue;
    const changed = Object.keys(r.fields).filter((name) => json(was[name]) !== json(r.fields[name]));
    if (!changed.length) continue;
    const pick = (values: Record<string, unknown>) => Object.fromEntries(changed.map((name) => [name, values[name] ?? null]));
    out.push({ type: 'record.updated', tableId, recordId: r.id, data: { changed_fields: changed, before: pick(was), after: pick(r.fields) } });
  }
  return out;
}

/**
 * Work that must commit or roll back with the events it is given (webhook deliveries are queued this way); `appended`
 * builds them when asked (most writes go to bases no hook wants).
 */
export type AppendHook = (tx: UnitOfWork, baseId: string, appended: () => ApiEvent[]) => Promise<void>;

export function createEventLog({ store, config }: Deps) {
  const { events } = store.schema;
  const newerEvents = aliasedTable(events, 'newer');
  // The partial indexes' own conditions, as literals: a bound parameter would not let SQLite use them.
  const oneEvent = sql`${events.eventCount} = 1`;
  const hooks: AppendHook[] = [];
  /**
   * SQLite (one process serves it, writes take turns): each base's last committed seq, so that an append need not ask the
   * log, and a transaction's own appends so far (its later appends follow them; they count once it commits). PostgreSQL
   * asks the log every time: another process may have appended since.
   */
  const committedSeq = store.engine === 'sqlite' ? new Map<string, number>() : undefined;
  const pendingSeq = new WeakMap<UnitOfWork, Map<string, number>>();
  /** The store's externalVersion when committedSeq was last trusted: another connection's commit (a tool, a test) moves it. */
  let seqVersion = -1;
  /** Hears of committed events of a base (from this process, or announced by another with baseId unknown: null). */
  const listeners = new Set<(baseId: string | null) => void>();
  /** Subscriptions being served now (a hung-up subscriber's must not stay). */
  let openStreams = 0;
  store.onAnnouncement('events', () => {
    for (const l of listeners) l(null);
  });

  return {
    /** Whether writes record events (EVENT_LOG); when off, callers may skip the reads that only events need. */
    enabled: config.eventLog,

    /** Appends events of a base inside `tx`; each gets the next `seq` of the base (writes take turns, so no gap). */
    async append(tx: UnitOfWork, baseId: string, actor: Actor | null, items: NewEvent[]) {
      if (!config.eventLog || !items.length) return;
      if (committedSeq) {
        const version = store.externalVersion();
        if (version !== seqVersion) {
          committedSeq.clear();
          seqVersion = version;
        }
      }
      let pending = pendingSeq.get(tx);
      let seq = pending?.get(baseId) ?? committedSeq?.get(baseId) ?? await tx.records.lastEventSeq(baseId);
      const at = nowIso();
      const actorType = actor?.kind ?? 'user';
      const actorId = actor?.id ?? null;
      const rows: EventRow[] = [];
      for (let i = 0; i < items.length;) {
        const e = items[i];
        let end = i + 1;
        if (e.recordId) {
          while (end < items.length && end - i < EVENTS_PER_ROW && items[end].recordId && items[end].type === e.type && items[end].tableId === e.tableId) end++;
        }
        const shared = { baseId, type: e.type, tableId: e.tableId ?? null, actorType, actorId, at };
        if (end === i + 1) rows.push({ ...shared, id: newId('evt'), seq: ++seq, recordId: e.recordId ?? null, data: e.data, eventCount: 1 });
        else {
          const run = items.slice(i, end);
          const data: SharedRowEvent[] = run.map((r) => ({ id: newId('evt'), data: r.data }));
          seq += run.length;
          rows.push({ ...shared, id: data[0].id, seq, recordId: run.map((r) => r.recordId).join(' '), data, eventCount: run.length });
        }
        i = end;
      }
      await tx.records.insertEvents(rows);
      if (committedSeq) {
        // Out of the cache until the commit puts it back: should the transaction roll back, or its afterCommit not run,
        // the next append asks the log.
        committedSeq.delete(baseId);
        if (!pending) {
          const own = (pending = new Map());
          pendingSeq.set(tx, own);
          tx.afterCommit(() => {
            for (const [base, last] of own) committedSeq.set(base, last);
          });
        }
        pending.set(baseId, seq);
      }
      if (hooks.length) {
        let appended: ApiEvent[] | undefined;
        for (const hook of hooks) await hook(tx, baseId, () => (appended ??= rows.flatMap(eventsOfRow)));
      }
      tx.announce('events');
      tx.afterCommit(() => {
        for (const l of listeners) l(baseId);
      });
    },

    /** Runs `hook` inside every transaction that appends events, after they are written. */
    onAppend(hook: AppendHook) {
      hooks.push(hook);
    },

    /** Calls `listener` after events commit; returns the function that stops it. */
    listen(listener: (baseId: string | null) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** Events of a base after cursor `after`, in `seq` order; `next` is the cursor after the last, null at the end. */
    async list(baseId: string, q: { after?: unknown; limit?: unknown; tableId?: string | null; type?: string | null }): Promise<{ items: ApiEvent[]; next: string | null }> {
      const limit = q.limit === undefined || q.limit === null ? 100 : Number(q.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest('limit must be an integer from 1 to 1000', [{ field: 'limit', message: 'must be 1 to 1000' }]);
      const after = q.after === undefined || q.after === null || q.after === '' ? 0 : Number(q.after);
      if (!Number.isSafeInteger(after) || after < 0) throw badRequest('after must be a cursor (a seq) from an earlier page', [{ field: 'after', message: 'must be a non-negative integer' }]);
      const filters = [q.tableId ? eq(events.tableId, q.tableId) : undefined, q.type ? eq(events.type, q.type) : undefined];
      // A row's seq is its last event's, so the first row read may hold events up to `after` too: they are skipped.
      const items: ApiEvent[] = [];
      const rowsPerQuery = Math.min(limit + 1, LIST_ROWS);
      for (let from = after; items.length <= limit;) {
        const rows = await store.db.select().from(events).where(and(eq(events.baseId, baseId), gt(events.seq, from), ...filters))
          .orderBy(asc(events.seq)).limit(rowsPerQuery);
        for (const r of rows) for (const e of eventsOfRow(r)) if (Number(e.seq) > after) items.push(e);
        if (rows.length < rowsPerQuery) break;
        from = rows[rows.length - 1].seq;
      }
      const page = items.slice(0, limit);
      return { items: page, next: items.length > limit ? page[page.length - 1].seq : null };
    },

    /**
     * A record's events, newest first: its own rows through `events_record`, and the rows it shares with others of its
     * writes, found among the table's shared rows by the ids they list (LIKE only narrows; the ids are compared exactly).
     */
    async ofRecord(tableId: string, recordId: string): Promise<ApiEvent[]> {
      const recordTypes = ['record.created', 'record.updated', 'record.deleted'];
      const own = await store.db.select().from(events)
        .where(and(eq(events.recordId, recordId), oneEvent, eq(events.tableId, tableId), inArray(events.type, recordTypes)));
      const shared = await store.db.select().from(events)
        .where(and(eq(events.tableId, tableId), sql`${events.eventCount} > 1`, like(events.recordId, `%${recordId}%`)));
      const found = [...own.flatMap(eventsOfRow), ...shared.flatMap(eventsOfRow).filter((e) => e.record_id === recordId)];
      return found.sort((a, b) => Number(b.seq) - Number(a.seq));
    },

    /**
     * The events of a base (or of one table) after `after` as they commit, in `seq` order and each once; without `after`,
     * from now. Woken by commits of this process and announcements of others, and at least every second. Between batches
     * it asks `stillAllowed` and ends with a 403 once the subscriber may no longer read the base. It ends when `signal`
     * aborts (the subscriber hung up): a generator told to return while it awaits would otherwise go on until its next
     * event, and one nobody returns (an SSE stream whose socket closed) would wake and query on every commit forever.
     */
    async *stream(baseId: string, opts: { tableId?: string; after: string | null; signal?: AbortSignal; stillAllowed: () => Promise<boolean> }): AsyncGenerator<ApiEvent> {
      let cursor: number;
      if (opts.after !== null && opts.after !== '') {
        cursor = Number(opts.after);
        if (!Number.isSafeInteger(cursor) || cursor < 0) throw badRequest('after must be a seq from an earlier event', [{ field: 'after', message: 'must be a non-negative integer' }]);
      } else cursor = (await first(store.db.select({ m: max(events.seq) }).from(events).where(eq(events.baseId, baseId))))?.m ?? 0;
      let wake: (() => void) | undefined;
      let woken = false;
      const stop = this.listen((b) => {
        if (b !== null && b !== baseId) return;
        woken = true;
        wake?.();
      });
      const hangUp = () => wake?.();
      opts.signal?.addEventListener('abort', hangUp);
      openStreams++;
      try {
        while (!opts.signal?.aborted) {
          woken = false;
          const page = await this.list(baseId, { after: cursor, limit: STREAM_BATCH, tableId: opts.tableId });
          for (const e of page.items) {
            cursor = Number(e.seq);
            yield e;
          }
          if (page.next) continue;
          if (!woken && !opts.signal?.aborted) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, STREAM_POLL_MS);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            wake = undefined;
          }
          if (opts.signal?.aborted) break;
          if (!(await opts.stillAllowed())) throw forbidden('You can no longer read this base');
        }
      } finally {
        opts.signal?.removeEventListener('abort', hangUp);
        openStreams--;
        stop();
      }
    },

    /** How many subscriptions this process is serving. */
    openStreams: () => openStreams,

    /**
     * Deletes events older than the retention period. Record events are also record history (contract section 16),
     * kept HISTORY_RETENTION_DAYS when that is longer, so the two kinds are pruned apart: the few other events through
     * their own partial index, and everything past the longer period oldest first per base (`at` grows with `seq`), in
     * chunks of their own transactions, so the record events still kept are never read and writers wait briefly. A base's
     * newest row is kept, whatever its age (with the events of the write that made it): the next event's `seq` follows its
     * last, so cursors held by subscribers stay valid.
     */
    async prune(now = Date.now()) {
      const before = new Date(now - config.eventRetentionDays * 86_400_000).toISOString();
      const historyBefore = new Date(now - Math.max(config.eventRetentionDays, config.historyRetentionDays) * 86_400_000).toISOString();
      await store.transaction(async (tx) => {
        const newer = tx.db.select({ seq: newerEvents.seq }).from(newerEvents).where(and(eq(newerEvents.baseId, events.baseId), gt(newerEvents.seq, events.seq)));
        await tx.db.delete(events).where(and(isNull(events.recordId), oneEvent, lt(events.at, before), exists(newer)));
      });
      const nextBase = async (after: string) => (await first(store.db.select({ id: events.baseId }).from(events)
        .where(gt(events.baseId, after)).orderBy(asc(events.baseId)).limit(1)))?.id;
      for (let baseId = await nextBase(''); baseId !== undefined; baseId = await nextBase(baseId)) {
        for (;;) {
          const oldest = await store.db.select({ seq: events.seq, at: events.at, eventCount: events.eventCount }).from(events)
            .where(eq(events.baseId, baseId)).orderBy(asc(events.seq)).limit(PRUNE_CHUNK);
          const expired = oldest.findIndex((e) => e.at >= historyBefore);
          const candidates = expired === -1 ? oldest.slice(0, -1) : oldest.slice(0, expired);
          // At most PRUNE_CHUNK events per transaction (a row may hold up to EVENTS_PER_ROW), but always one row.
          let take = 0;
          for (let n = 0; take < candidates.length && (take === 0 || n + candidates[take].eventCount <= PRUNE_CHUNK); take++) n += candidates[take].eventCount;
          const last = candidates[take - 1];
          if (last) await store.transaction(async (tx) => void (await tx.db.delete(events).where(and(eq(events.baseId, baseId), lte(events.seq, last.seq)))));
          const more = take < candidates.length || (expired === -1 && oldest.length === PRUNE_CHUNK);
          if (!more || !last) break;
        }
      }
    },
  };
}

/** One event of a row that holds several (see the header). */
interface SharedRowEvent {
  id: string;
  data: Record<string, unknown>;
}

/** The events of a row of `events`, in seq order. */
function eventsOfRow(r: EventRow): ApiEvent[] {
  const event = (id: string, seq: number, recordId: string | null, data: unknown): ApiEvent => ({
    id, seq: String(seq), type: r.type, base_id: r.baseId, table_id: r.tableId, record_id: recordId,
    actor: { type: r.actorType, id: r.actorId }, at: r.at, data: data as Record<string, unknown>,
  });
  if (r.eventCount === 1) return [event(r.id, r.seq, r.recordId, r.data)];
  const recordIds = r.recordId!.split(' ');
  const first = r.seq - r.eventCount + 1;
  return (r.data as SharedRowEvent[]).map((e, i) => event(e.id, first + i, recordIds[i], e.data));
}

export type EventLog = ReturnType<typeof createEventLog>;
