// Records: validation of written values against field types, all-or-nothing batches, and filtered, sorted pages.
import { readThrough } from '../db/read-cache.js';
import type { ConditionGroup, RowWrite, StoredRow, UnitOfWork } from '../db/store.js';
import { badRequest, notFound } from '../errors.js';
import type { FieldDef, ValueContext } from '../fields/field-type.js';
import { typeOfField } from '../fields/registry.js';
import { newId, nowIso } from '../ids.js';
import type { Actor, Deps, ImportActor } from './deps.js';
import { convertRows, type ColumnTarget, type ImportRow } from './imports/convert.js';
import type { RowError } from './jobs.js';
import type { FieldService } from './fields.js';
import { pageArgs, type Page } from './pagination.js';
import { recordOf, recordsOf, writtenRows, type ApiRecord } from './record-values.js';
import { heldIds, resolveAttachments } from './attachment-values.js';
import type { ComputedChanges, ComputedEngine } from './computed/recompute.js';
import { recordEvents, type EventLog } from './events.js';
import { fieldResolver, parseFilter, parseSort } from './record-query.js';
import { checkLinks, itemError, prepare } from './record-input.js';
import type { SearchIndexer } from './search-indexer.js';
import type { TableService } from './tables.js';
import { combineView, type ViewQuery } from './views.js';
import type { TrashService } from './trash.js';

export type { ApiRecord } from './record-values.js';

/** How a write reports: values keyed by field name (v1, plugins) or id (Open API), and work to do in its transaction (audit). */
export interface WriteOptions {
  keyBy?: 'name' | 'id';
  inTransaction?: (tx: UnitOfWork, recordIds: string[]) => Promise<void> | void;
  /** How many workflow-caused changes led to this write (0 or absent for people and applications). */
  depth?: number;
}

/** A committed-with-the-write change, as listeners (workflow triggers) see it inside the write transaction. */
export interface RecordChange {
  tableId: string;
  kind: 'created' | 'updated';
  /** The records after the change, values keyed by field name. */
  after: ApiRecord[];
  /** For updates: the records before the change, when a listener asked for them. */
  before?: Map<string, ApiRecord>;
  fields: FieldDef[];
  depth: number;
}
export interface RecordChangeListener {
  /** Whether updates of this table need the records as they were before. */
  wantsBefore(tableId: string): boolean;
  /** Awaited inside the write transaction: what the listener writes through `tx` commits or rolls back with the write. */
  changed(tx: UnitOfWork, change: RecordChange): Promise<void> | void;
}

export const MAX_BATCH = 1000;
export const MAX_PAGE_SIZE = 1000;

/** A parsed filter as text, its fields by id: what keys a list's count, whether the filter came from a view or not. */
const filterKey = (where: ConditionGroup | undefined) => (where ? JSON.stringify(where, (key, value) => (key === 'field' ? (value as FieldDef).id : value)) : '');

/** The value context of a table without a field that checks members: none of its types asks it anything. */
const NO_MEMBERS: ValueContext = {
  isBaseMember() {
    throw new Error('base members were not loaded: a field type that asks for them must say so with checksMembers');
  },
};

export function createRecordService(deps: Deps, tables: TableService, fieldService: FieldService, search: SearchIndexer, computed: ComputedEngine, events: EventLog, trash?: TrashService) {
  const { store } = deps;
  const listeners: RecordChangeListener[] = [];
  const counts = readThrough<number>(store);

  // A record's answer: record-values.ts builds it from the field list's shape, worked out once per list.
  const toApi = recordOf;

  function checkBatchSize(items: unknown, what = 'records') {
    if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH) {
      throw badRequest(`${what} must be an array of 1 to ${MAX_BATCH} items`, [{ field: what, message: `must hold 1 to ${MAX_BATCH} items` }]);
    }
  }

  /** The table (404 when missing) and its fields: one table read and the cached field definitions outside transactions. */
  async function context(uow: UnitOfWork, tableId: string) {
    const table = await tables.loadTable(uow, tableId);
    const fields = await fieldService.loadFields(uow, tableId);
    return { table, fields };
  }

  /** Inside a write transaction: what validating values needs. Only a user field asks for the base's members. */
  async function writeContext(tx: UnitOfWork, tableId: string) {
    const { table, fields } = await context(tx, tableId);
    const ctx = fields.some((f) => typeOfField(f).checksMembers) ? await fieldService.memberContext(tx, table.baseId) : NO_MEMBERS;
    return { baseId: table.baseId, fields, resolve: fieldResolver(fields), ctx, graph: await computed.graphOf(tx, table.baseId) };
  }

  /**
   * Tells the listeners of records whose computed values a write changed, beyond the records it wrote (`tableId`, `written`),
   * as updates: before and after differ in those computed values.
   */
  async function computedChanged(tx: UnitOfWork, changes: ComputedChanges, by: { actor: Actor | null; baseId: string; depth: number }, tableId?: string, written: string[] = []) {
    if (!listeners.length && !events.enabled) return;
    for (const [table, byRecord] of changes) {
      const ids = [...byRecord.keys()].filter((id) => table !== tableId || !written.includes(id));
      if (!ids.length) continue;
      const fields = await fieldService.loadFields(tx, table);
      const rows = await tx.records.getMany(table, fields, ids);
      const after = rows.map((r) => toApi(fields, r));
      const before = new Map(rows.map((r, i) => {
        const was = { ...after[i], fields: { ...after[i].fields } };
        for (const [fieldId, old] of byRecord.get(r.id)!) {
          const f = fields.find((x) => x.id === fieldId);
          if (f) was.fields[f.name] = typeOfField(f).fromStored(old ?? null, f);
        }
        return [r.id, was];
      }));
      const change: RecordChange = { tableId: table, kind: 'updated', after, before, fields, depth: by.depth };
      for (const l of listeners) await l.changed(tx, change);
      await events.append(tx, by.baseId, by.actor, recordEvents(table, 'updated', after, before));
    }
  }

  /** After records were created or updated (here, or by a trash restore): workflow listeners, events, then the computed fan-out. */
  async function announce(tx: UnitOfWork, by: { actor: Actor | null; baseId: string; depth: number }, tableId: string, kind: RecordChange['kind'],
    fields: FieldDef[], after: ApiRecord[], before: Map<string, ApiRecord> | undefined, fanOut: ComputedChanges) {
    if (listeners.length) {
      const change: RecordChange = { tableId, kind, after, before, fields, depth: by.depth };
      for (const l of listeners) await l.changed(tx, change);
    }
    await events.append(tx, by.baseId, by.actor, recordEvents(tableId, kind, after, before));
    await computedChanged(tx, fanOut, by, tableId, after.map((r) => r.id));
  }

  async function create(actor: Actor | null, tableId: string, items: unknown[], single: boolean, opts: WriteOptions = {}): Promise<ApiRecord[]> {
    // Validation reads the field definitions inside the write transaction, so no schema change slips in between.
    return store.transaction(async (tx) => {
      const { baseId, fields, resolve, ctx, graph } = await writeContext(tx, tableId);
      const links = new Map();
      const rows: RowWrite[] = items.map((item, i) => ({ id: newId('rec'), values: prepare(fields, resolve, ctx, item, 'create', single ? undefined : i, links) }));
      await checkLinks(tx, links);
      await resolveAttachments(tx, store.schema, actor, fields, rows, single);
      const at = nowIso();
      const by = actor?.id ?? null;
      await tx.records.insert(tableId, fields, rows, at, by);
      tx.afterCommit(() => search.touch(tableId));
      const ids = rows.map((r) => r.id);
      const fanOut = await computed.created(tx, graph, tableId, ids);
      await opts.inTransaction?.(tx, ids);
      const after = writtenRows(rows, fields, at, by) ?? await tx.records.getMany(tableId, fields, ids);
      const byName = after.map((r) => toApi(fields, r));
      await announce(tx, { actor, baseId, depth: opts.depth ?? 0 }, tableId, 'created', fields, byName, undefined, fanOut);
      // Listeners see values by name; only an Open API write needs them keyed by id as well.
      return opts.keyBy === 'id' ? after.map((r) => toApi(fields, r, 'id')) : byName;
    });
  }

  async function update(actor: Actor | null, tableId: string, items: Array<{ id: unknown; fields: unknown }>, single: boolean, opts: WriteOptions = {}): Promise<ApiRecord[]> {
    return store.transaction(async (tx) => {
      const { baseId, fields, resolve, ctx, graph } = await writeContext(tx, tableId);
      const links = new Map();
      const seen = new Set<string>();
      const rows: RowWrite[] = items.map((item, i) => {
        const index = single ? undefined : i;
        if (typeof item !== 'object' || item === null) throw itemError('BAD_REQUEST', index, 'each item must be an object with "id" and "fields"');
        if (typeof item.id !== 'string' || !item.id) throw itemError('BAD_REQUEST', index, '"id" must be a record id', 'id');
        if (seen.has(item.id)) throw itemError('BAD_REQUEST', index, `record ${item.id} appears twice in the batch`, 'id');
        seen.add(item.id);
        return { id: item.id, values: prepare(fields, resolve, ctx, item.fields, 'update', index, links) };
      });
      const found = await tx.records.existing(tableId, rows.map((r) => r.id));
      rows.forEach((r, i) => {
        if (!found.has(r.id)) throw itemError('NOT_FOUND', single ? undefined : i, `record ${r.id} not found in table ${tableId}`, 'id');
      });
      await checkLinks(tx, links);
      await resolveAttachments(tx, store.schema, actor, fields, rows, single, async (held) => heldIds(fields, await tx.records.getMany(tableId, fields, held)));
      const ids = rows.map((r) => r.id);
      const before = events.enabled || listeners.some((l) => l.wantsBefore(tableId))
        ? new Map((await tx.records.getMany(tableId, fields, ids)).map((r) => [r.id, toApi(fields, r)]))
        : undefined;
      await tx.records.update(tableId, fields, rows, nowIso(), actor?.id ?? null);
      tx.afterCommit(() => search.touch(tableId));
      const fanOut = await computed.updated(tx, graph, ids, new Set(rows.flatMap((r) => [...r.values.keys()])));
      await opts.inTransaction?.(tx, ids);
      const after = await tx.records.getMany(tableId, fields, ids);
      const byName = after.map((r) => toApi(fields, r));
      await announce(tx, { actor, baseId, depth: opts.depth ?? 0 }, tableId, 'updated', fields, byName, before, fanOut);
      // Listeners see values by name; only an Open API write needs them keyed by id as well.
      return opts.keyBy === 'id' ? after.map((r) => toApi(fields, r, 'id')) : byName;
    });
  }

  /** Before a delete: per table, the records (other than the deleted) whose link fields hold one of `ids`, as they are. */
  async function linkHolders(tx: UnitOfWork, incoming: FieldDef[], ids: string[]) {
    const byTable = new Map<string, Set<string>>();
    const doomed = new Set(ids);
    for (const link of incoming) {
      const found = (await tx.records.linkingTo(link, ids)).filter((id) => !doomed.has(id));
      if (found.length) byTable.set(link.tableId, new Set([...(byTable.get(link.tableId) ?? []), ...found]));
    }
    const out: Array<{ tableId: string; fields: FieldDef[]; before: Map<string, ApiRecord> }> = [];
    for (const [holderTable, holderIds] of byTable) {
      const holderFields = await fieldService.loadFields(tx, holderTable);
      const rows = await tx.records.getMany(holderTable, holderFields, [...holderIds]);
      out.push({ tableId: holderTable, fields: holderFields, before: new Map(rows.map((r) => [r.id, toApi(holderFields, r)])) });
    }
    return out;
  }

  async function remove(actor: Actor | null, tableId: string, ids: unknown[], single: boolean, opts: WriteOptions = {}): Promise<string[]> {
    return store.transaction(async (tx) => {
      const { table, fields } = await context(tx, tableId);
      const seen = new Set<string>();
      ids.forEach((id, i) => {
        const index = single ? undefined : i;
        if (typeof id !== 'string' || !id) throw itemError('BAD_REQUEST', index, '"id" must be a record id', 'id');
        if (seen.has(id)) throw itemError('BAD_REQUEST', index, `record ${id} appears twice in the batch`, 'id');
        seen.add(id);
      });
      const found = await tx.records.existing(tableId, ids as string[]);
      ids.forEach((id, i) => {
        if (!found.has(id as string)) throw itemError('NOT_FOUND', single ? undefined : i, `record ${id} not found in table ${tableId}`, 'id');
      });
      const graph = await computed.graphOf(tx, table.baseId);
      const linked = await computed.linkedBeforeDelete(tx, graph, tableId, ids as string[]);
      const stored = await tx.records.getMany(tableId, fields, ids as string[]);
      await trash?.recordsDeleted(tx, table.baseId, tableId, fields, stored, actor);
      const gone = events.enabled ? stored.map((r) => toApi(fields, r)) : [];
      const incoming = await fieldService.linksTo(tx, tableId);
      const holders = events.enabled || listeners.length ? await linkHolders(tx, incoming, ids as string[]) : [];
      await tx.records.delete(tableId, ids as string[], fields.filter((f) => f.type === 'link'), incoming);
      await events.append(tx, table.baseId, actor, recordEvents(tableId, 'deleted', gone));
      const by = { actor, baseId: table.baseId, depth: opts.depth ?? 0 };
      const fanOut = await computed.afterDelete(tx, graph, linked);
      // Records of other tables that linked to a deleted record lost it from their link cells: each is an update (with
      // whatever computed values changed with it), so live grids, webhooks and record_updated workflows see the cascade.
      for (const h of holders) {
        for (const id of h.before.keys()) fanOut.get(h.tableId)?.delete(id);
        const after = (await tx.records.getMany(h.tableId, h.fields, [...h.before.keys()])).map((r) => toApi(h.fields, r));
        await announce(tx, by, h.tableId, 'updated', h.fields, after, h.before, new Map());
      }
      await computedChanged(tx, fanOut, by);
      await opts.inTransaction?.(tx, ids as string[]);
      return ids as string[];
    });
  }

  return {
    toApi,
    announce,

    /**
     * Import (contract section 15): one chunk of file rows in one transaction, converted by the field types' own code;
     * rows that do not convert or link to missing records are reported and skipped. Events carry the import actor; no
     * workflow listener runs (an import does not fire workflows per row). `inTransaction` writes the job's progress.
     */
    async importChunk(actor: ImportActor, tableId: string, rows: ImportRow[], targets: (fields: FieldDef[]) => ColumnTarget[], inTransaction: (tx: UnitOfWork, result: { imported: number; errors: RowError[] }) => Promise<boolean>) {
      return store.transaction(async (tx) => {
        const { baseId, fields, ctx, graph } = await writeContext(tx, tableId);
        const { writes, errors, links } = convertRows(rows, targets(fields), fields, ctx);
        const bad = new Set<number>();
        for (const target of new Set(links.map((l) => l.field.config.table_id as string))) {
          const uses = links.filter((l) => l.field.config.table_id === target);
          const found = await tx.records.existing(target, [...new Set(uses.flatMap((u) => u.ids))]);
          for (const u of uses) {
            const missing = u.ids.find((id) => !found.has(id));
            if (missing && !bad.has(u.write)) {
              bad.add(u.write);
              errors.push({ row: writes[u.write].row, column: u.column, field: u.field.name, message: `field "${u.field.name}": record ${missing} does not exist in the linked table` });
            }
          }
        }
        const good = bad.size ? writes.filter((_w, i) => !bad.has(i)) : writes;
        errors.sort((a, b) => a.row - b.row);
        const result = { imported: good.length, errors };
        // The job's own check (cancel asked for) comes first: a cancelled chunk writes nothing.
        if (!(await inTransaction(tx, result))) return { imported: 0, errors: [], cancelled: true };
        if (!good.length) return { ...result, cancelled: false };
        const at = nowIso();
        await tx.records.insert(tableId, fields, good, at, actor.userId);
        tx.afterCommit(() => search.touch(tableId));
        const ids = good.map((r) => r.id);
        const fanOut = await computed.created(tx, graph, tableId, ids);
        if (events.enabled) {
          const rows = writtenRows(good, fields, at, actor.userId) ?? await tx.records.getMany(tableId, fields, ids);
          const byName = rows.map((r) => toApi(fields, r));
          await events.append(tx, baseId, actor, recordEvents(tableId, 'created', byName));
          await computedChanged(tx, fanOut, { actor, baseId, depth: 0 }, tableId, ids);
        }
        return { ...result, cancelled: false };
      });
    },

    /** Whether one record matches a parsed filter (workflow condition nodes). */
    async matches(uow: UnitOfWork, tableId: string, where: ConditionGroup, recordId: string): Promise<boolean> {
      return (await uow.records.matching(tableId, where, [recordId])).has(recordId);
    },

    /** Registers a listener that sees every record change inside its write transaction, whatever door it came through. */
    onChange(listener: RecordChangeListener) {
      listeners.push(listener);
    },

    async listRecords(tableId: string, q: {
      page?: number | null; pageSize?: number | null; filter?: unknown; sort?: unknown; withTotal?: boolean;
      keyBy?: 'name' | 'id'; maxPageSize?: number; sizeName?: string;
      /** A view's query over the table's fields (contract section 13). */
      view?: (fields: FieldDef[]) => ViewQuery;
    }): Promise<Page<ApiRecord>> {
      const p = pageArgs(q.page, q.pageSize, { defaultSize: 20, maxSize: q.maxPageSize ?? MAX_PAGE_SIZE, sizeName: q.sizeName });
      const { fields } = await context(store, tableId);
      let where = parseFilter(q.filter, fields);
      let sort = parseSort(q.sort, fields);
      let shown = fields;
      if (q.view) ({ where, sort, visible: shown } = combineView(q.view(fields), where, sort));
      const withTotal = q.withTotal ?? true;
      // A filter's count is kept while nothing commits (read-cache.ts): paging through a large table counts it once.
      // Keyed by the filter the list runs (a view's and the request's together; a change to a view commits, which
      // empties the cache).
      const { rows } = await store.records.list(tableId, shown, { where, sort, limit: p.pageSize, offset: p.offset });
      const count = withTotal ? await counts(`${tableId}\u0000${filterKey(where)}`, () => store.records.count(tableId, where)) : -1;
      return { items: recordsOf(shown, rows, q.keyBy), total: count, page: p.page, pageSize: p.pageSize };
    },

    /** Keyword search (contract section 6): every whitespace-separated term occurs in some text-like value; creation order. */
    async searchRecords(tableId: string, q: { q: unknown; page?: number | null; pageSize?: number | null; keyBy?: 'name' | 'id'; maxPageSize?: number; sizeName?: string }): Promise<Page<ApiRecord>> {
      if (typeof q.q !== 'string' || q.q.trim() === '') throw badRequest('q is required: the words to search for', [{ field: 'q', message: 'required' }]);
      const p = pageArgs(q.page, q.pageSize, { defaultSize: 20, maxSize: q.maxPageSize ?? MAX_PAGE_SIZE, sizeName: q.sizeName });
      const { fields } = await context(store, tableId);
      const terms = [...new Set(q.q.trim().split(/\s+/))];
      if (search.isPending(tableId)) await store.transaction((tx) => search.catchUp(tx, tableId, fields));
      const { rows, total } = await store.records.search(tableId, fields, terms, p.pageSize, p.offset);
      return { items: recordsOf(fields, rows, q.keyBy), total, page: p.page, pageSize: p.pageSize };
    },

    async getRecord(tableId: string, recordId: string, keyBy: 'name' | 'id' = 'name'): Promise<ApiRecord> {
      const { fields } = await context(store, tableId);
      const [row] = await store.records.getMany(tableId, fields, [recordId]);
      if (!row) throw notFound(`Record ${recordId} not found in table ${tableId}`);
      return toApi(fields, row, keyBy);
    },

    async createRecord(actor: Actor | null, tableId: string, values: unknown, opts?: WriteOptions): Promise<ApiRecord> {
      return (await create(actor, tableId, [values], true, opts))[0];
    },
    async updateRecord(actor: Actor | null, tableId: string, recordId: string, values: unknown, opts?: WriteOptions): Promise<ApiRecord> {
      return (await update(actor, tableId, [{ id: recordId, fields: values }], true, opts))[0];
    },
    async deleteRecord(actor: Actor | null, tableId: string, recordId: string, opts?: WriteOptions): Promise<{ id: string; deleted: true }> {
      await remove(actor, tableId, [recordId], true, opts);
      return { id: recordId, deleted: true };
    },

    /** Contract section 4 batch: create/update items hold `fields`, update/delete items hold `id`; all or nothing. */
    async batchRecords(actor: Actor | null, tableId: string, action: unknown, items: unknown): Promise<{ items?: ApiRecord[]; deleted?: string[] }> {
      if (action !== 'create' && action !== 'update' && action !== 'delete') {
        throw badRequest('action must be "create", "update" or "delete"', [{ field: 'action', message: 'must be create, update or delete' }]);
      }
      checkBatchSize(items);
      const list = items as unknown[];
      // Each item holds exactly the keys its action uses, so a typo such as "field" is refused rather than ignored.
      const allowed = { create: ['fields'], update: ['id', 'fields'], delete: ['id'] }[action];
      const asItem = (item: unknown, i: number) => {
        if (typeof item !== 'object' || item === null || Array.isArray(item)) throw itemError('BAD_REQUEST', i, 'each item must be an object');
        const extra = Object.keys(item).find((k) => !allowed.includes(k));
        if (extra) throw itemError('BAD_REQUEST', i, `unknown property "${extra}" (a ${action} item holds ${allowed.join(' and ')})`, extra);
        if (action !== 'delete' && !('fields' in item)) throw itemError('BAD_REQUEST', i, '"fields" is required', 'fields');
        return item as Record<string, unknown>;
      };
      if (action === 'create') return { items: await create(actor, tableId, list.map((item, i) => asItem(item, i).fields), false) };
      if (action === 'update') return { items: await update(actor, tableId, list.map((item, i) => asItem(item, i) as { id: unknown; fields: unknown }), false) };
      return { deleted: await remove(actor, tableId, list.map((item, i) => (typeof item === 'string' ? item : asItem(item, i).id)), false) };
    },
  };
}

export type RecordService = ReturnType<typeof createRecordService>;
