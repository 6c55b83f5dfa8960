// Keeps computed values current inside the write that changes their inputs: from the records and fields a write
// changed, it finds the dependent records (in the same record, and through links in both directions), recomputes them
// slice by slice in dependency order, writes what changed, and goes on from there through chains across tables.
import { and, asc, eq, isNotNull } from 'drizzle-orm';
import { first, type UnitOfWork } from '../../db/store.js';
import type { FieldDef } from '../../fields/field-type.js';
import type { Deps } from '../deps.js';
import { computeValues } from './evaluate.js';
import { buildGraph, type ComputedGraph } from './graph.js';

/** Records per recompute slice: one read of inputs and one of linked values each. */
const SLICE = 500;
/** A new or changed computed field of a table up to this size is filled in the transaction that saves it. */
export const FILL_IN_TRANSACTION = 10_000;
/** Larger tables are filled in the background, this many records per transaction, so no request waits long. */
const BACKGROUND_SLICE = 2_000;

/** What a recompute changed: by table, by record, the computed fields and the stored value each held before. */
export type ComputedChanges = Map<string, Map<string, Map<string, unknown>>>;

type Dirty = Map<string, Set<string>>;

function mark(dirty: Dirty, fieldId: string, ids: Iterable<string>) {
  let set = dirty.get(fieldId);
  if (!set) dirty.set(fieldId, (set = new Set()));
  for (const id of ids) set.add(id);
}

/** Equal stored values (a column may give back 3 for 3.0, and both engines give NULL for null). */
const same = (a: unknown, b: unknown) => a === b || (a == null && b == null) || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) < 1e-12);

export function createComputedEngine({ store }: Deps) {
  const { fields, tables } = store.schema;
  const cache = new Map<string, ComputedGraph>();
  let seenVersion = -1;
  /** Units of work that changed field definitions: their graph is read fresh and never cached. */
  const changing = new WeakSet<UnitOfWork>();

  async function baseFields(uow: UnitOfWork, baseId: string): Promise<FieldDef[]> {
    const rows = await uow.db.select({ field: fields }).from(fields).innerJoin(tables, eq(fields.tableId, tables.id))
      .where(and(eq(tables.baseId, baseId))).orderBy(asc(fields.position));
    return rows.map((r) => r.field as FieldDef);
  }

  /**
   * The graph of a base. Cached on SQLite, whose one writer cannot miss a change; on PostgreSQL a transaction reads it
   * fresh, since another process may have committed a new definition that its announcement has not brought yet.
   */
  async function graphOf(uow: UnitOfWork, baseId: string): Promise<ComputedGraph> {
    const version = store.externalVersion();
    if (version !== seenVersion) {
      cache.clear();
      seenVersion = version;
    }
    const cacheable = !changing.has(uow) && (store.engine === 'sqlite' || !uow.inTransaction);
    const cached = cacheable ? cache.get(baseId) : undefined;
    if (cached) return cached;
    const graph = buildGraph(await baseFields(uow, baseId));
    if (cacheable) cache.set(baseId, graph);
    return graph;
  }

  /** Recomputes the dirty records field by field in dependency order; each change marks its own readers dirty. */
  async function propagate(tx: UnitOfWork, graph: ComputedGraph, dirty: Dirty, changes: ComputedChanges) {
    for (const field of graph.order) {
      const ids = dirty.get(field.id);
      if (!ids?.size) continue;
      dirty.delete(field.id);
      const all = [...ids];
      for (let i = 0; i < all.length; i += SLICE) {
        const changed = (await computeValues(tx, graph, field, all.slice(i, i + SLICE))).filter((v) => !same(v.stored, v.old));
        if (!changed.length) continue;
        await tx.records.fillField(field.tableId, field, changed);
        let byRecord = changes.get(field.tableId);
        if (!byRecord) changes.set(field.tableId, (byRecord = new Map()));
        for (const v of changed) {
          let old = byRecord.get(v.id);
          if (!old) byRecord.set(v.id, (old = new Map()));
          if (!old.has(field.id)) old.set(field.id, v.old);
        }
        await markReaders(tx, graph, changed.map((v) => v.id), [field.id], dirty);
      }
    }
  }

  /** Marks what reads `fieldIds` of the records `ids`: in the same records, and in the records linking to them. */
  async function markReaders(tx: UnitOfWork, graph: ComputedGraph, ids: string[], fieldIds: Iterable<string>, dirty: Dirty) {
    for (const fieldId of fieldIds) {
      for (const reader of graph.readers.get(fieldId) ?? []) mark(dirty, reader.id, ids);
      for (const { computed, link } of graph.throughLinks.get(fieldId) ?? []) mark(dirty, computed.id, await tx.records.linkingTo(link, ids));
    }
  }

  /**
   * Recomputes `field` for the records of its table after `afterSeq`, at most `limit` of them, and what reads them;
   * returns the last `_seq` done, or null when the table is done.
   */
  async function fillSlice(tx: UnitOfWork, graph: ComputedGraph, field: FieldDef, afterSeq: number, limit: number): Promise<{ lastSeq: number | null }> {
    const slice = await tx.records.idsAfter(field.tableId, afterSeq, limit);
    if (slice.length) {
      const dirty: Dirty = new Map();
      mark(dirty, field.id, slice.map((r) => r.id));
      await propagate(tx, graph, dirty, new Map());
    }
    return { lastSeq: slice.length < limit ? null : slice[slice.length - 1].seq };
  }

  let running: Promise<void> | undefined;
  let stopped = false;
  /** Fills fields marked `fill_after_seq`, one slice per transaction, until none is left; one loop per process. */
  function runFills(): Promise<void> {
    if (running || stopped) return running ?? Promise.resolve();
    running = (async () => {
      try {
        while (!stopped) {
          const next = await first(store.db.select({ id: fields.id, baseId: tables.baseId }).from(fields)
            .innerJoin(tables, eq(fields.tableId, tables.id)).where(isNotNull(fields.fillAfterSeq)).limit(1));
          if (!next) break;
          await store.transaction(async (tx) => {
            // Read again under the write lock: another process may have moved it on.
            const row = await first(tx.db.select({ after: fields.fillAfterSeq }).from(fields).where(eq(fields.id, next.id)));
            if (row?.after == null) return;
            const graph = await graphOf(tx, next.baseId);
            const field = graph.byId.get(next.id);
            const { lastSeq } = field ? await fillSlice(tx, graph, field, row.after, BACKGROUND_SLICE) : { lastSeq: null };
            await tx.db.update(fields).set({ fillAfterSeq: lastSeq }).where(eq(fields.id, next.id));
          });
          await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (e) {
        // The marked field stays marked: the next start, or the next fill announced, takes it up again.
        if (!stopped) console.error('computing field values in the background failed:', e);
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  return {
    graphOf,
    baseFields,

    /** Drops the cached graphs (a field or table changed). */
    forget: () => cache.clear(),

    /** A change of field definitions in `uow`: graphs are rebuilt, and read fresh inside it. */
    definitionsChanged(uow: UnitOfWork) {
      cache.clear();
      changing.add(uow);
      uow.afterCommit(() => cache.clear());
    },

    /** After records were created: their computed values (and whatever reads those). */
    async created(tx: UnitOfWork, graph: ComputedGraph, tableId: string, ids: string[]): Promise<ComputedChanges> {
      const changes: ComputedChanges = new Map();
      const own = graph.order.filter((f) => f.tableId === tableId);
      if (!own.length || !ids.length) return changes;
      const dirty: Dirty = new Map();
      for (const f of own) mark(dirty, f.id, ids);
      await propagate(tx, graph, dirty, changes);
      return changes;
    },

    /** After records were updated: whatever reads the fields they changed. */
    async updated(tx: UnitOfWork, graph: ComputedGraph, ids: string[], fieldIds: Iterable<string>): Promise<ComputedChanges> {
      const changes: ComputedChanges = new Map();
      if (!graph.order.length || !ids.length) return changes;
      const dirty: Dirty = new Map();
      await markReaders(tx, graph, ids, fieldIds, dirty);
      await propagate(tx, graph, dirty, changes);
      return changes;
    },

    /**
     * Before records of `tableId` are deleted: the records that link to them through links some computed field reads,
     * by link field. Their links change with the delete, so `afterDelete` recomputes them.
     */
    async linkedBeforeDelete(tx: UnitOfWork, graph: ComputedGraph, tableId: string, ids: string[]): Promise<Map<FieldDef, string[]>> {
      const out = new Map<FieldDef, string[]>();
      for (const link of graph.linksInto.get(tableId) ?? []) {
        const sources = (await tx.records.linkingTo(link, ids)).filter((id) => !ids.includes(id));
        if (sources.length) out.set(link, sources);
      }
      return out;
    },

    async afterDelete(tx: UnitOfWork, graph: ComputedGraph, linked: Map<FieldDef, string[]>): Promise<ComputedChanges> {
      const changes: ComputedChanges = new Map();
      const dirty: Dirty = new Map();
      for (const [link, sources] of linked) await markReaders(tx, graph, sources, [link.id], dirty);
      await propagate(tx, graph, dirty, changes);
      return changes;
    },

    /**
     * Computes `list` (computed fields of the base, as saved in `tx`) for every record: in `tx` for a table of up to
     * FILL_IN_TRANSACTION records, else in the background once `tx` has committed (the field shows its progress).
     */
    async fill(tx: UnitOfWork, baseId: string, list: FieldDef[]) {
      const graph = await graphOf(tx, baseId);
      for (const { id } of list) {
        const field = graph.byId.get(id)!;
        if ((await tx.records.count(field.tableId)) <= FILL_IN_TRANSACTION) {
          for (let after: number | null = 0; after !== null;) after = (await fillSlice(tx, graph, field, after, SLICE * 4)).lastSeq;
          await tx.db.update(fields).set({ fillAfterSeq: null }).where(eq(fields.id, id));
        } else {
          await tx.db.update(fields).set({ fillAfterSeq: 0 }).where(eq(fields.id, id));
          tx.afterCommit(() => void runFills());
          tx.announce('fills');
        }
      }
    },

    /** Resumes background fills left by a stop (at start); fills announced by other processes are taken up too. */
    resumeFills() {
      store.onAnnouncement('fills', () => void runFills());
      void runFills();
    },

    async stop() {
      stopped = true;
      await running;
    },
  };
}

export type ComputedEngine = ReturnType<typeof createComputedEngine>;
