// The trash and record history (contract section 16): deleted records move into the `trash` table, restores put them back.
import { and, desc, eq, lt } from 'drizzle-orm';
import type { StoredRow, UnitOfWork } from '../db/store.js';
import { conflict, notFound } from '../errors.js';
import type { FieldDef } from '../fields/field-type.js';
import { nowIso } from '../ids.js';
import { randomUUID } from 'node:crypto';
import type { Actor, Deps } from './deps.js';
import type { ComputedEngine } from './computed/recompute.js';
import type { EventLog } from './events.js';
import type { FieldService } from './fields.js';
import type { RecordService } from './records.js';
import type { TableService } from './tables.js';
import { createSchemaTrash, type FieldPayload, type TablePayload } from './trash-schema.js';

/** What a record's trash entry keeps: its stored row and the records that linked to it (other tables' link fields). */
interface RecordPayload {
  row: StoredRow;
  /** Per incoming link field: the records of `tableId` whose field `fieldId` held this record. */
  linkedFrom: Array<{ fieldId: string; tableId: string; ids: string[] }>;
}

export interface ApiTrashItem {
  id: string;
  type: 'record' | 'field' | 'table';
  name: string;
  table_id: string;
  deleted_at: string;
  deleted_by: string | null;
}

export interface ApiHistoryEntry {
  at: string;
  type: 'created' | 'updated' | 'deleted';
  actor: { type: string; id: string | null };
  changes: Record<string, { before: unknown; after: unknown }>;
}

const DAY = 86_400_000;

/** `records` is read lazily: the record service is built after the trash, which its deletes write to. */
export function createTrash(deps: Deps, tables: TableService, fieldService: FieldService, computed: ComputedEngine, events: EventLog, records: () => RecordService) {
  const { store, config } = deps;
  const { trash } = store.schema;
  const schemaTrash = createSchemaTrash(deps, fieldService, computed, events);
  const newTrashId = () => `trs${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const expiry = () => new Date(Date.now() + config.trashRetentionDays * DAY).toISOString();

  async function put(tx: UnitOfWork, e: { baseId: string; type: 'field' | 'table'; tableId: string; itemId: string; name: string; payload: unknown }, actor: Actor | null) {
    await tx.db.insert(trash).values({ ...e, id: newTrashId(), payload: JSON.stringify(e.payload), deletedAt: nowIso(), deletedBy: actor?.id ?? null, expiresAt: expiry() });
  }
  fieldService.trashHook.field = async (tx, baseId, field, actor) => {
    await put(tx, { baseId, type: 'field', tableId: field.tableId, itemId: field.id, name: field.name, payload: await schemaTrash.fieldPayload(tx, field) }, actor);
  };
  tables.trashHook.table = async (tx, baseId, tableId, name, actor) => {
    await put(tx, { baseId, type: 'table', tableId, itemId: tableId, name, payload: await schemaTrash.tablePayload(tx, tableId) }, actor);
  };

  /** A record's name in the trash list: its primary (first) field's value as text. */
  function recordName(fields: FieldDef[], row: StoredRow): string {
    const primary = fields[0];
    const v = primary ? row.values[primary.id] : null;
    return v === null || v === undefined ? row.id : typeof v === 'string' ? v : JSON.stringify(v);
  }

  return {
    /**
     * Inside a delete's transaction, before the rows go: one trash entry per record, with its incoming links (outgoing
     * ones are in its own stored values). Costs one getMany per incoming link field, so a table nobody links to pays nothing more.
     */
    async recordsDeleted(tx: UnitOfWork, baseId: string, tableId: string, fields: FieldDef[], rows: StoredRow[], actor: Actor | null) {
      if (!rows.length) return;
      const ids = rows.map((r) => r.id);
      const incoming = new Map<string, RecordPayload['linkedFrom']>();
      for (const link of await fieldService.linksTo(tx, tableId)) {
        const holders = await tx.records.linkingTo(link, ids);
        if (!holders.length) continue;
        for (const h of await tx.records.getMany(link.tableId, [link], holders)) {
          for (const target of (h.values[link.id] as string[] | null) ?? []) {
            if (!ids.includes(target)) continue;
            const list = incoming.get(target) ?? [];
            let entry = list.find((e) => e.fieldId === link.id);
            if (!entry) list.push((entry = { fieldId: link.id, tableId: link.tableId, ids: [] }));
            entry.ids.push(h.id);
            incoming.set(target, list);
          }
        }
      }
      const at = nowIso();
      const expiresAt = expiry();
      const entries = rows.map((row) => ({
        id: newTrashId(), baseId, type: 'record', tableId, itemId: row.id, name: recordName(fields, row),
        payload: JSON.stringify({ row, linkedFrom: incoming.get(row.id) ?? [] } satisfies RecordPayload),
        deletedAt: at, deletedBy: actor?.id ?? null, expiresAt,
      }));
      for (let i = 0; i < entries.length; i += 1000) await tx.db.insert(trash).values(entries.slice(i, i + 1000));
    },

    /** The base and type of an entry (404 when gone): what the permission check needs. */
    async describe(id: string): Promise<{ baseId: string; type: string }> {
      const [row] = await store.db.select({ baseId: trash.baseId, type: trash.type }).from(trash).where(eq(trash.id, id));
      if (!row) throw notFound(`Trash item ${id} not found`);
      return row;
    },

    /** A base's trash, newest first; `all` false shows records only (editors). */
    async list(baseId: string, all: boolean): Promise<ApiTrashItem[]> {
      const where = all ? eq(trash.baseId, baseId) : and(eq(trash.baseId, baseId), eq(trash.type, 'record'));
      // Not the payloads: a deleted table's holds every record it had.
      const rows = await store.db.select({ id: trash.id, type: trash.type, name: trash.name, tableId: trash.tableId, deletedAt: trash.deletedAt, deletedBy: trash.deletedBy })
        .from(trash).where(where).orderBy(desc(trash.deletedAt), desc(trash.id));
      return rows.map((r) => ({ id: r.id, type: r.type as ApiTrashItem['type'], name: r.name, table_id: r.tableId, deleted_at: r.deletedAt, deleted_by: r.deletedBy }));
    },

    /**
     * Puts a record back with its id and values in one transaction: links to records that still exist (both directions),
     * computed values recomputed, and a record.created event as for a new record.
     */
    async restore(actor: Actor | null, id: string): Promise<{ id: string; type: string; item_id: string }> {
      return store.transaction(async (tx) => {
        const [entry] = await tx.db.select().from(trash).where(eq(trash.id, id));
        if (!entry) throw notFound(`Trash item ${id} not found`);
        if (entry.type !== 'record') {
          if (entry.type === 'field') await schemaTrash.restoreField(tx, entry.baseId, JSON.parse(entry.payload) as FieldPayload, actor);
          else await schemaTrash.restoreTable(tx, JSON.parse(entry.payload) as TablePayload, actor);
          await tx.db.delete(trash).where(eq(trash.id, id));
          return { id, type: entry.type, item_id: entry.itemId };
        }
        const { row, linkedFrom } = JSON.parse(entry.payload) as RecordPayload;
        await tables.loadTable(tx, entry.tableId); // 404 when its table is gone
        if ((await tx.records.existing(entry.tableId, [row.id])).size) throw conflict(`Record ${row.id} already exists`);
        const fields = await fieldService.loadFields(tx, entry.tableId);
        const graph = await computed.graphOf(tx, entry.baseId);
        const values = new Map<string, unknown>();
        for (const f of fields) {
          if (!(f.id in row.values)) continue;
          let v = row.values[f.id];
          if (f.type === 'link' && Array.isArray(v)) {
            const live = await tx.records.existing(f.config.table_id as string, v as string[]);
            v = (v as string[]).filter((x) => live.has(x));
          }
          values.set(f.id, v);
        }
        await tx.records.insert(entry.tableId, fields, [{ id: row.id, values }], row.createdAt, row.createdBy);
        // Announced as a creation: workflows with a record_created trigger run, the event log and subscribers see it.
        const by = { actor, baseId: entry.baseId, depth: 0 };
        const fanOut = await computed.created(tx, graph, entry.tableId, [row.id]);
        const [restored] = await tx.records.getMany(entry.tableId, fields, [row.id]);
        await records().announce(tx, by, entry.tableId, 'created', fields, [records().toApi(fields, restored)], undefined, fanOut);
        // Incoming links: each holder that still exists gets this record back in its link field, announced as its update.
        for (const l of linkedFrom) {
          const holderFields = await fieldService.loadFields(tx, l.tableId).catch(() => []);
          const link = holderFields.find((f) => f.id === l.fieldId);
          if (!link) continue;
          // A holder deleted in the same batch and restored first may hold the link already (its own values kept it).
          const lacking = (await tx.records.getMany(l.tableId, holderFields, l.ids)).filter((h) => !((h.values[link.id] as string[] | null) ?? []).includes(row.id));
          if (!lacking.length) continue;
          const before = new Map(lacking.map((h) => [h.id, records().toApi(holderFields, h)]));
          await tx.records.update(l.tableId, [link], lacking.map((h) => ({
            id: h.id, values: new Map([[link.id, [...((h.values[link.id] as string[] | null) ?? []), row.id]]]),
          })), nowIso(), actor?.id ?? null);
          const holderFanOut = await computed.updated(tx, graph, lacking.map((h) => h.id), [link.id]);
          const after = (await tx.records.getMany(l.tableId, holderFields, lacking.map((h) => h.id))).map((h) => records().toApi(holderFields, h));
          await records().announce(tx, by, l.tableId, 'updated', holderFields, after, before, holderFanOut);
        }
        await tx.db.delete(trash).where(eq(trash.id, id));
        return { id, type: entry.type, item_id: row.id };
      });
    },

    /** Removes an entry for good. */
    async purge(id: string): Promise<{ id: string; deleted: true }> {
      await store.transaction(async (tx) => {
        const [entry] = await tx.db.select({ id: trash.id }).from(trash).where(eq(trash.id, id));
        if (!entry) throw notFound(`Trash item ${id} not found`);
        await tx.db.delete(trash).where(eq(trash.id, id));
      });
      return { id, deleted: true };
    },

    /** A record's changes from the event log, newest first (kept HISTORY_RETENTION_DAYS: events.prune spares record events). */
    async history(tableId: string, recordId: string): Promise<ApiHistoryEntry[]> {
      return (await events.ofRecord(tableId, recordId)).map((e) => {
        const data = e.data as { before?: Record<string, unknown>; after?: Record<string, unknown> };
        const names = new Set([...Object.keys(data.before ?? {}), ...Object.keys(data.after ?? {})]);
        const changes: ApiHistoryEntry['changes'] = {};
        for (const n of names) changes[n] = { before: data.before?.[n] ?? null, after: data.after?.[n] ?? null };
        return { at: e.at, type: e.type.slice('record.'.length) as ApiHistoryEntry['type'], actor: e.actor, changes };
      });
    },

    /** Deletes entries past their expiry (run with the event log's pruning). */
    async prune(now = Date.now()) {
      const at = new Date(now).toISOString();
      await store.transaction(async (tx) => void (await tx.db.delete(trash).where(lt(trash.expiresAt, at))));
    },
  };
}

export type TrashService = ReturnType<typeof createTrash>;
