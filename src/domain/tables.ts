// Tables of a base: each is a real SQL table created and dropped with its metadata.
import { asc, count, eq, inArray, sql } from 'drizzle-orm';
import { readCache } from '../db/read-cache.js';
import { first, type Db, type UnitOfWork } from '../db/store.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { Access } from './access.js';
import type { BaseService } from './bases.js';
import type { Actor, Deps } from './deps.js';
import { eventField, eventTable, type EventLog } from './events.js';
import type { FieldInput, FieldService } from './fields.js';
import type { ViewService } from './views.js';
import { pageArgs, type Page } from './pagination.js';
import { AppError } from '../errors.js';
import { checkDescription, checkName } from '../checks.js';

export interface Table {
  id: string;
  baseId: string;
  name: string;
  description: string;
  createdAt: string;
  updatedAt: string;
}


/** `views`: makes a new table's default grid view inside the transaction that creates the table. */
export function createTableService(deps: Deps, access: Access, bases: BaseService, fieldService: FieldService, events: EventLog, views: Pick<ViewService, 'createDefault'>) {
  const { store } = deps;
  const { tables, fields: fieldsTable, users } = store.schema;

  // Prepared once: every record operation loads its table (outside transactions; inside, the transaction reads).
  const byId = store.db.select().from(tables).where(eq(tables.id, sql.placeholder('id'))).prepare();
  // Prepared once per connection (every record write loads its table inside its transaction).
  const tableById = (db: Db) => db.select().from(tables).where(eq(tables.id, sql.placeholder('id'))).prepare();
  const cachedById = readCache(store, async (id) => (await byId.execute({ id }))[0]);
  async function load(uow: UnitOfWork, id: string): Promise<Table> {
    const row = uow.inTransaction ? (await uow.prepared(tableById).execute({ id }))[0] : await cachedById(id);
    if (!row) throw notFound(`Table ${id} not found`);
    return row;
  }

  async function assertUniqueName(tx: UnitOfWork, baseId: string, name: string, exceptId?: string) {
    const clash = (await tx.db.select({ id: tables.id, name: tables.name }).from(tables).where(eq(tables.baseId, baseId)))
      .find((t) => t.name.toLowerCase() === name.toLowerCase() && t.id !== exceptId);
    if (clash) throw conflict(`A table named "${clash.name}" already exists in this base`);
  }

  /** Set by the trash (built after this service): keeps a table's definition and records before they are dropped. */
  const trashHook: { table?: (tx: UnitOfWork, baseId: string, tableId: string, name: string, actor: Actor | null) => Promise<void> } = {};

  return {
    trashHook,
    getTable: async (id: string) => load(store, id),
    loadTable: load,

    async listTables(actor: Actor, baseId: string | null | undefined, page?: number | null, pageSize?: number | null): Promise<Page<Table>> {
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      let where;
      if (baseId) where = eq(tables.baseId, baseId);
      else {
        const ids = await bases.readableBaseIds(actor);
        where = ids === 'all' ? undefined : inArray(tables.baseId, ids);
      }
      const items = await store.db.select().from(tables).where(where).orderBy(asc(tables.createdAt), asc(tables.id)).limit(p.pageSize).offset(p.offset);
      const total = (await first(store.db.select({ n: count() }).from(tables).where(where)))!.n;
      return { items, total, page: p.page, pageSize: p.pageSize };
    },

    /** The base a new table goes to: the one named, or the caller's default base. */
    async targetBase(actor: Actor, baseId: string | null | undefined): Promise<string> {
      if (baseId) return access.baseOf({ baseId });
      const user = await first(store.db.select({ defaultBaseId: users.defaultBaseId }).from(users).where(eq(users.id, actor.id)).limit(1));
      if (!user?.defaultBaseId) throw badRequest('base_id is required: you have no default base', [{ field: 'base_id', message: 'required' }]);
      return user.defaultBaseId;
    },

    async createTable(baseId: string, input: { name: unknown; description?: unknown; fields?: unknown }, actor: Actor | null = null): Promise<Table> {
      const name = checkName(input.name);
      const description = checkDescription(input.description);
      if (input.fields !== undefined && input.fields !== null && !Array.isArray(input.fields)) throw badRequest('fields must be an array', [{ field: 'fields', message: 'must be an array' }]);
      return store.transaction(async (tx) => {
        await assertUniqueName(tx, baseId, name);
        const now = nowIso();
        const id = newId('tbl');
        await tx.db.insert(tables).values({ id, baseId, name, description, createdAt: now, updatedAt: now });
        await tx.records.createTable(id, baseId);
        tx.announce('schema');
        const fieldInputs = (input.fields as FieldInput[] | undefined) ?? [];
        for (const [index, f] of fieldInputs.entries()) {
          try {
            if (typeof f !== 'object' || f === null) throw badRequest('a field must be an object');
            // A link may point at the table being created.
            await fieldService.insertField(tx, id, baseId, f);
          } catch (e) {
            if (e instanceof AppError) throw new AppError(e.code, `fields[${index}]: ${e.message}`, { details: [{ index, message: e.message }] });
            throw e;
          }
        }
        const table = await load(tx, id);
        const fields = await fieldService.loadFields(tx, id);
        await events.append(tx, baseId, actor, [{ type: 'table.created', tableId: id, data: { table: eventTable(table), fields: fields.map(eventField) } }]);
        await views.createDefault(tx, id, baseId, actor);
        return table;
      });
    },

    async updateTable(id: string, input: { name?: unknown; description?: unknown }, actor: Actor | null = null): Promise<Table> {
      return store.transaction(async (tx) => {
        const table = await load(tx, id);
        const changes: Partial<typeof tables.$inferInsert> = { updatedAt: nowIso() };
        if (input.name !== undefined) {
          changes.name = checkName(input.name);
          await assertUniqueName(tx, table.baseId, changes.name, id);
        }
        if (input.description !== undefined) changes.description = checkDescription(input.description);
        await tx.db.update(tables).set(changes).where(eq(tables.id, id));
        tx.announce('schema');
        const after = await load(tx, id);
        await events.append(tx, table.baseId, actor, [{ type: 'table.updated', tableId: id, data: { before: eventTable(table), after: eventTable(after) } }]);
        return after;
      });
    },

    /** Deletes a table with its fields, records, and the link fields elsewhere that point at it. */
    async deleteTable(id: string, actor: Actor | null = null): Promise<{ id: string; deleted: true }> {
      return store.transaction(async (tx) => {
        const table = await load(tx, id);
        // Its fields and the links to it go with it: refused while a computed field elsewhere reads one of them.
        const doomed = [...await fieldService.loadFields(tx, id), ...(await fieldService.linksTo(tx, id)).filter((l) => l.tableId !== id)];
        await fieldService.checkUnread(tx, table.baseId, doomed, `Table "${table.name}"`);
        await trashHook.table?.(tx, table.baseId, id, table.name, actor);
        for (const link of await fieldService.linksTo(tx, id)) {
          if (link.tableId === id) continue;
          await tx.records.dropField(link.tableId, link);
          await tx.db.delete(fieldsTable).where(eq(fieldsTable.id, link.id));
        }
        await tx.records.dropTable(id, await fieldService.loadFields(tx, id));
        await tx.db.delete(tables).where(eq(tables.id, id));
        fieldService.changed(tx);
        await events.append(tx, table.baseId, actor, [{ type: 'table.deleted', tableId: id, data: { table: eventTable(table) } }]);
        return { id, deleted: true as const };
      });
    },
  };
}

export type TableService = ReturnType<typeof createTableService>;
