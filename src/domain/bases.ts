// Bases and their members; the creator of a base is its owner, and a base always keeps one owner.
import { and, asc, count, eq, inArray } from 'drizzle-orm';
import { baseMembers, bases, fields, tables, users } from '../db/schema.js';
import { writeTransaction } from '../db/connection.js';
import { badRequest, conflict, forbidden, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { ROLES, type Access, type Role } from './access.js';
import type { Actor, Deps } from './deps.js';
import { pageArgs, type Page } from './pagination.js';
import type { FieldDef } from '../fields/field-type.js';
import { checkDescription, checkName } from '../checks.js';

export interface Base {
  id: string;
  name: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  /** The caller's role in the base. */
  role: Role;
}

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  createdAt: string;
}


export function createBaseService({ sqlite, orm, store }: Deps, access: Access) {
  const toBase = (row: typeof bases.$inferSelect, role: Role): Base => ({ ...row, role });

  function load(actor: Actor, id: string): Base {
    const row = orm.select().from(bases).where(eq(bases.id, id)).get();
    if (!row) throw notFound(`Base ${id} not found`);
    return toBase(row, access.roleIn(actor, id) ?? 'viewer');
  }

  /** Ids of the bases an actor can read: all of them for a system administrator. */
  function readableBaseIds(actor: Actor): string[] | 'all' {
    if (actor.isAdmin) return 'all';
    return orm.select({ id: baseMembers.baseId }).from(baseMembers).where(eq(baseMembers.userId, actor.id)).all().map((r) => r.id);
  }

  /** Inside a transaction: deletes a base with the storage of its tables. */
  function dropBase(id: string) {
    const tableIds = orm.select({ id: tables.id }).from(tables).where(eq(tables.baseId, id)).all().map((t) => t.id);
    for (const tableId of tableIds) {
      const defs = orm.select().from(fields).where(eq(fields.tableId, tableId)).all() as FieldDef[];
      store.dropTable(tableId, defs);
    }
    orm.update(users).set({ defaultBaseId: null }).where(eq(users.defaultBaseId, id)).run();
    orm.delete(bases).where(eq(bases.id, id)).run(); // tables, fields and members cascade
  }

  /**
   * Inside a transaction, before a user is deleted: bases where they are the only member go with them;
   * a base they alone own but share with others must get another owner first (409).
   */
  function releaseUser(userId: string) {
    const owned = orm.select({ baseId: baseMembers.baseId }).from(baseMembers).where(and(eq(baseMembers.userId, userId), eq(baseMembers.role, 'owner'))).all();
    for (const { baseId } of owned) {
      const members = orm.select().from(baseMembers).where(eq(baseMembers.baseId, baseId)).all();
      if (members.some((m) => m.userId !== userId && m.role === 'owner')) continue;
      if (members.length === 1) {
        dropBase(baseId);
        continue;
      }
      const name = orm.select({ name: bases.name }).from(bases).where(eq(bases.id, baseId)).get()?.name;
      throw conflict(`The user is the only owner of base ${baseId} ("${name}"), which has other members: make one of them owner first`);
    }
  }

  return {
    readableBaseIds,
    releaseUser,

    async listBases(actor: Actor, page?: number | null, pageSize?: number | null): Promise<Page<Base>> {
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      const ids = readableBaseIds(actor);
      const where = ids === 'all' ? undefined : inArray(bases.id, ids);
      const rows = orm.select().from(bases).where(where).orderBy(asc(bases.createdAt), asc(bases.id)).limit(p.pageSize).offset(p.offset).all();
      const total = orm.select({ n: count() }).from(bases).where(where).get()!.n;
      return { items: rows.map((r) => toBase(r, access.roleIn(actor, r.id)!)), total, page: p.page, pageSize: p.pageSize };
    },

    async getBase(actor: Actor, id: string): Promise<Base> {
      return load(actor, id);
    },

    async createBase(actor: Actor, input: { name: unknown; description?: unknown }): Promise<Base> {
      const name = checkName(input.name);
      const description = checkDescription(input.description);
      return writeTransaction(sqlite, () => {
        const now = nowIso();
        const id = newId('bse');
        orm.insert(bases).values({ id, name, description, createdAt: now, updatedAt: now }).run();
        orm.insert(baseMembers).values({ baseId: id, userId: actor.id, role: 'owner', createdAt: now }).run();
        return load(actor, id);
      });
    },

    async updateBase(actor: Actor, id: string, input: { name?: unknown; description?: unknown }): Promise<Base> {
      const changes: Partial<typeof bases.$inferInsert> = {};
      if (input.name !== undefined) changes.name = checkName(input.name);
      if (input.description !== undefined) changes.description = checkDescription(input.description);
      return writeTransaction(sqlite, () => {
        load(actor, id);
        orm.update(bases).set({ ...changes, updatedAt: nowIso() }).where(eq(bases.id, id)).run();
        return load(actor, id);
      });
    },

    async deleteBase(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
      return writeTransaction(sqlite, () => {
        load(actor, id);
        dropBase(id);
        return { id, deleted: true as const };
      });
    },

    async listMembers(actor: Actor, baseId: string): Promise<Member[]> {
      load(actor, baseId);
      return orm
        .select({ userId: baseMembers.userId, email: users.email, name: users.name, role: baseMembers.role, createdAt: baseMembers.createdAt })
        .from(baseMembers)
        .innerJoin(users, eq(users.id, baseMembers.userId))
        .where(eq(baseMembers.baseId, baseId))
        .orderBy(asc(baseMembers.createdAt))
        .all() as Member[];
    },

    async setMember(actor: Actor, baseId: string, userId: string, role: unknown): Promise<Member> {
      if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
        throw badRequest(`role must be one of ${ROLES.join(', ')}`, [{ field: 'role', message: `must be one of ${ROLES.join(', ')}` }]);
      }
      return writeTransaction(sqlite, () => {
        load(actor, baseId);
        if (!orm.select({ id: users.id }).from(users).where(eq(users.id, userId)).get()) throw notFound(`User ${userId} not found`);
        const current = orm.select().from(baseMembers).where(and(eq(baseMembers.baseId, baseId), eq(baseMembers.userId, userId))).get();
        const callerRole = access.roleIn(actor, baseId);
        // Only an owner hands out ownership or changes an owner.
        if ((role === 'owner' || current?.role === 'owner') && callerRole !== 'owner') throw forbidden('Only an owner can grant or change the owner role');
        if (current?.role === 'owner' && role !== 'owner') assertAnotherOwner(baseId, userId);
        if (current) orm.update(baseMembers).set({ role: role as Role }).where(and(eq(baseMembers.baseId, baseId), eq(baseMembers.userId, userId))).run();
        else orm.insert(baseMembers).values({ baseId, userId, role: role as Role, createdAt: nowIso() }).run();
        return memberOf(baseId, userId);
      });
    },

    async removeMember(actor: Actor, baseId: string, userId: string): Promise<{ userId: string; removed: true }> {
      return writeTransaction(sqlite, () => {
        load(actor, baseId);
        const current = orm.select().from(baseMembers).where(and(eq(baseMembers.baseId, baseId), eq(baseMembers.userId, userId))).get();
        if (!current) throw notFound(`User ${userId} is not a member of base ${baseId}`);
        if (current.role === 'owner') {
          if (access.roleIn(actor, baseId) !== 'owner') throw forbidden('Only an owner can remove an owner');
          assertAnotherOwner(baseId, userId);
        }
        orm.delete(baseMembers).where(and(eq(baseMembers.baseId, baseId), eq(baseMembers.userId, userId))).run();
        return { userId, removed: true as const };
      });
    },
  };

  function assertAnotherOwner(baseId: string, userId: string) {
    const owners = orm.select({ userId: baseMembers.userId }).from(baseMembers).where(and(eq(baseMembers.baseId, baseId), eq(baseMembers.role, 'owner'))).all();
    if (!owners.some((o) => o.userId !== userId)) throw conflict('A base must keep at least one owner');
  }

  function memberOf(baseId: string, userId: string): Member {
    return orm
      .select({ userId: baseMembers.userId, email: users.email, name: users.name, role: baseMembers.role, createdAt: baseMembers.createdAt })
      .from(baseMembers)
      .innerJoin(users, eq(users.id, baseMembers.userId))
      .where(and(eq(baseMembers.baseId, baseId), eq(baseMembers.userId, userId)))
      .get() as Member;
  }
}

export type BaseService = ReturnType<typeof createBaseService>;
