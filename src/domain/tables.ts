// Tables of a base: each is a real SQLite table created and dropped with its metadata.
import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import { fields as fieldsTable, tables, users } from '../db/schema.js';
import { writeTransaction } from '../db/connection.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { Access } from './access.js';
import type { BaseService } from './bases.js';
import type { Actor, Deps } from './deps.js';
import type { FieldInput, FieldService } from './fields.js';
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


export function createTableService(deps: Deps, access: Access, bases: BaseService, fieldService: FieldService) {
  const { sqlite, orm, store } = deps;

  // Prepared once: every record operation loads its table.
  const byId = orm.select().from(tables).where(eq(tables.id, sql.placeholder('id'))).prepare();
  function load(id: string): Table {
    const row = byId.get({ id });
    if (!row) throw notFound(`Table ${id} not found`);
    return row;
  }

  function assertUniqueName(baseId: string, name: string, exceptId?: string) {
    const clash = orm.select({ id: tables.id, name: tables.name }).from(tables).where(eq(tables.baseId, baseId)).all()
      .find((t) => t.name.toLowerCase() === name.toLowerCase() && t.id !== exceptId);
    if (clash) throw conflict(`A table named "${clash.name}" already exists in this base`);
  }

  return {
    getTable: async (id: string) => load(id),
    loadTable: load,

    async listTables(actor: Actor, baseId: string | null | undefined, page?: number | null, pageSize?: number | null): Promise<Page<Table>> {
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      let where;
      if (baseId) where = eq(tables.baseId, baseId);
      else {
        const ids = bases.readableBaseIds(actor);
        where = ids === 'all' ? undefined : inArray(tables.baseId, ids);
      }
      const items = orm.select().from(tables).where(where).orderBy(asc(tables.createdAt), asc(tables.id)).limit(p.pageSize).offset(p.offset).all();
      const total = orm.select({ n: count() }).from(tables).where(where).get()!.n;
      return { items, total, page: p.page, pageSize: p.pageSize };
    },

    /** The base a new table goes to: the one named, or the caller's default base. */
    targetBase(actor: Actor, baseId: string | null | undefined): string {
      if (baseId) return access.baseOf({ baseId });
      const user = orm.select({ defaultBaseId: users.defaultBaseId }).from(users).where(eq(users.id, actor.id)).get();
      if (!user?.defaultBaseId) throw badRequest('base_id is required: you have no default base', [{ field: 'base_id', message: 'required' }]);
      return user.defaultBaseId;
    },

    async createTable(baseId: string, input: { name: unknown; description?: unknown; fields?: unknown }): Promise<Table> {
      const name = checkName(input.name);
      const description = checkDescription(input.description);
      if (input.fields !== undefined && input.fields !== null && !Array.isArray(input.fields)) throw badRequest('fields must be an array', [{ field: 'fields', message: 'must be an array' }]);
      return writeTransaction(sqlite, () => {
        assertUniqueName(baseId, name);
        const now = nowIso();
        const id = newId('tbl');
        orm.insert(tables).values({ id, baseId, name, description, createdAt: now, updatedAt: now }).run();
        store.createTable(id);
        ((input.fields as FieldInput[] | undefined) ?? []).forEach((f, index) => {
          try {
            if (typeof f !== 'object' || f === null) throw badRequest('a field must be an object');
            // A link may point at the table being created.
            fieldService.insertField(id, baseId, f);
          } catch (e) {
            if (e instanceof AppError) throw new AppError(e.code, `fields[${index}]: ${e.message}`, { details: [{ index, message: e.message }] });
            throw e;
          }
        });
        return load(id);
      });
    },

    async updateTable(id: string, input: { name?: unknown; description?: unknown }): Promise<Table> {
      return writeTransaction(sqlite, () => {
        const table = load(id);
        const changes: Partial<typeof tables.$inferInsert> = { updatedAt: nowIso() };
        if (input.name !== undefined) {
          changes.name = checkName(input.name);
          assertUniqueName(table.baseId, changes.name, id);
        }
        if (input.description !== undefined) changes.description = checkDescription(input.description);
        orm.update(tables).set(changes).where(eq(tables.id, id)).run();
        return load(id);
      });
    },

    /** Deletes a table with its fields, records, and the link fields elsewhere that point at it. */
    async deleteTable(id: string): Promise<{ id: string; deleted: true }> {
      return writeTransaction(sqlite, () => {
        load(id);
        for (const link of fieldService.linksTo(id)) {
          if (link.tableId === id) continue;
          store.dropField(link.tableId, link);
          orm.delete(fieldsTable).where(and(eq(fieldsTable.id, link.id))).run();
        }
        store.dropTable(id, fieldService.loadFields(id));
        orm.delete(tables).where(eq(tables.id, id)).run();
        fieldService.invalidate();
        return { id, deleted: true as const };
      });
    },
  };
}

export type TableService = ReturnType<typeof createTableService>;
