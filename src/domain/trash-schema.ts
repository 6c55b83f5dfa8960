// Deleted fields and tables in the trash (contract section 16): what their entries keep, and how a restore rebuilds them.
import { eq, max } from 'drizzle-orm';
import type { RowWrite, StoredRow, UnitOfWork } from '../db/store.js';
import { conflict, notFound } from '../errors.js';
import type { FieldDef } from '../fields/field-type.js';
import { isComputed } from './computed/definitions.js';
import { nowIso } from '../ids.js';
import type { ComputedEngine } from './computed/recompute.js';
import type { Actor, Deps } from './deps.js';
import type { EventLog } from './events.js';
import type { FieldService } from './fields.js';

/** A field's entry: its definition and every record's stored value (readField's raw form, which fillField takes back). */
export interface FieldPayload {
  field: FieldDef;
  position: number;
  values: Array<{ id: string; raw: unknown }>;
}
/** A table's entry: its row, its fields in order, every record's stored row (read in slices) and the link fields of other tables to it. */
export interface TablePayload {
  table: { id: string; baseId: string; name: string; description: string; createdAt: string; updatedAt: string };
  fields: FieldDef[];
  rows: StoredRow[];
  /** Deleted with the table (absent in entries written before they were kept). */
  incoming?: FieldPayload[];
}

const SLICE = 1000;

export function createSchemaTrash({ store }: Deps, fieldService: FieldService, computed: ComputedEngine, events: EventLog) {
  const { fields: fieldsTable, tables: tablesTable } = store.schema;

  async function insertFieldRow(tx: UnitOfWork, field: FieldDef, position: number) {
    await tx.db.insert(fieldsTable).values({ id: field.id, tableId: field.tableId, name: field.name, type: field.type, required: field.required, options: field.options, config: field.config, indexed: field.indexed, position, createdAt: nowIso() });
    await tx.records.addField(field.tableId, field);
  }

  return {
    /** Inside deleteField, before the column goes. Computed fields keep no values: a restore computes them again. */
    async fieldPayload(tx: UnitOfWork, field: FieldDef): Promise<FieldPayload> {
      const [row] = await tx.db.select({ position: fieldsTable.position }).from(fieldsTable).where(eq(fieldsTable.id, field.id));
      return { field, position: row?.position ?? 0, values: isComputed(field) ? [] : await tx.records.readField(field.tableId, field) };
    },

    /** Inside deleteTable, before its storage goes: every record in `_seq` order. */
    async tablePayload(tx: UnitOfWork, tableId: string): Promise<TablePayload> {
      const [table] = await tx.db.select().from(tablesTable).where(eq(tablesTable.id, tableId));
      const fields = await fieldService.loadFields(tx, tableId);
      const rows: StoredRow[] = [];
      for (let after = 0; ;) {
        const slice = await tx.records.idsAfter(tableId, after, SLICE);
        if (!slice.length) break;
        rows.push(...(await tx.records.getMany(tableId, fields, slice.map((s) => s.id))));
        after = slice[slice.length - 1].seq;
      }
      const incoming: FieldPayload[] = [];
      for (const link of await fieldService.linksTo(tx, tableId)) if (link.tableId !== tableId) incoming.push(await this.fieldPayload(tx, link));
      return { table, fields, rows, incoming };
    },

    async restoreField(tx: UnitOfWork, baseId: string, p: FieldPayload, actor: Actor | null) {
      const { field } = p;
      const current = await fieldService.loadFields(tx, field.tableId).catch(() => null);
      if (!current) throw notFound(`Table ${field.tableId} of field "${field.name}" no longer exists`);
      const clash = current.find((f) => f.name.toLowerCase() === field.name.toLowerCase());
      if (clash) throw conflict(`A field named "${clash.name}" already exists in this table`);
      if (field.type === 'link' && !(await tx.db.select({ id: tablesTable.id }).from(tablesTable).where(eq(tablesTable.id, field.config.table_id as string))).length) {
        throw conflict(`The table field "${field.name}" links to no longer exists`);
      }
      const top = (await tx.db.select({ m: max(fieldsTable.position) }).from(fieldsTable).where(eq(fieldsTable.tableId, field.tableId)))[0]?.m ?? -1;
      await insertFieldRow(tx, field, Math.max(p.position, top + 1));
      fieldService.changed(tx);
      computed.definitionsChanged(tx);
      if (isComputed(field)) await computed.fill(tx, baseId, [field]);
      else {
        // Values of records deleted meanwhile are skipped; links only to records that still exist.
        const live = await tx.records.existing(field.tableId, p.values.map((v) => v.id));
        let values = p.values.filter((v) => live.has(v.id));
        if (field.type === 'link') {
          const targets = await tx.records.existing(field.config.table_id as string, [...new Set(values.flatMap((v) => v.raw as string[]))]);
          values = values.map((v) => ({ id: v.id, raw: (v.raw as string[]).filter((t) => targets.has(t)) })).filter((v) => (v.raw as string[]).length);
        }
        await tx.records.fillField(field.tableId, field, values.map((v) => ({ id: v.id, stored: v.raw })));
      }
      await events.append(tx, baseId, actor, [{ type: 'field.created', tableId: field.tableId, data: { field: { id: field.id, name: field.name, type: field.type } } }]);
    },

    async restoreTable(tx: UnitOfWork, p: TablePayload, actor: Actor | null) {
      const { table, fields } = p;
      const siblings = await tx.db.select({ name: tablesTable.name }).from(tablesTable).where(eq(tablesTable.baseId, table.baseId));
      const clash = siblings.find((t) => t.name.toLowerCase() === table.name.toLowerCase());
      if (clash) throw conflict(`A table named "${clash.name}" already exists in this base`);
      await tx.db.insert(tablesTable).values(table);
      await tx.records.createTable(table.id, table.baseId);
      tx.announce('schema');
      // Links to tables deleted meanwhile cannot come back; the rest of the fields do, in their order.
      const kept: FieldDef[] = [];
      for (const [i, f] of fields.entries()) {
        if (f.type === 'link' && f.config.table_id !== table.id && !(await tx.db.select({ id: tablesTable.id }).from(tablesTable).where(eq(tablesTable.id, f.config.table_id as string))).length) continue;
        await insertFieldRow(tx, f, i);
        kept.push(f);
      }
      fieldService.changed(tx);
      computed.definitionsChanged(tx);
      const ids = new Set(p.rows.map((r) => r.id));
      const targets = new Map<string, Set<string>>();
      for (const f of kept.filter((x) => x.type === 'link' && x.config.table_id !== table.id)) {
        targets.set(f.id, await tx.records.existing(f.config.table_id as string, [...new Set(p.rows.flatMap((r) => (r.values[f.id] as string[] | null) ?? []))]));
      }
      const plain = kept.filter((f) => !isComputed(f));
      // Rows are inserted in groups sharing their creation time and creator, which insert takes once per call.
      for (let i = 0; i < p.rows.length;) {
        const { createdAt, createdBy } = p.rows[i];
        const group: RowWrite[] = [];
        for (; i < p.rows.length && p.rows[i].createdAt === createdAt && p.rows[i].createdBy === createdBy && group.length < SLICE; i++) {
          const r = p.rows[i];
          const values = new Map<string, unknown>();
          for (const f of plain) {
            let v = r.values[f.id];
            if (f.type === 'link' && Array.isArray(v)) v = (v as string[]).filter((t) => (f.config.table_id === table.id ? ids.has(t) : targets.get(f.id)!.has(t)));
            if (v !== undefined) values.set(f.id, v);
          }
          group.push({ id: r.id, values });
        }
        await tx.records.insert(table.id, plain, group, createdAt, createdBy);
      }
      const computedFields = kept.filter((f) => isComputed(f));
      if (computedFields.length) await computed.fill(tx, table.baseId, computedFields);
      await events.append(tx, table.baseId, actor, [{ type: 'table.created', tableId: table.id, data: { table: { id: table.id, name: table.name }, fields: kept.map((f) => ({ id: f.id, name: f.name, type: f.type })) } }]);
      // Other tables' links to it come back as field restores (a name taken since is a 409); a table deleted meanwhile keeps none.
      for (const link of p.incoming ?? []) {
        if ((await tx.db.select({ id: tablesTable.id }).from(tablesTable).where(eq(tablesTable.id, link.field.tableId))).length) await this.restoreField(tx, table.baseId, link, actor);
      }
    },
  };
}

export type SchemaTrash = ReturnType<typeof createSchemaTrash>;
