// Bases and their members; the creator of a base is its owner, and a base always keeps one owner.
import { and, asc, count, eq, inArray } from 'drizzle-orm';
import { first, type Schema, type UnitOfWork } from '../db/store.js';
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


export function createBaseService({ store }: Deps, access: Access) {
  const { baseMembers, bases, fields, tables, users } = store.schema;
  const toBase = (row: Schema['bases']['$inferSelect'], role: Role): Base => ({ ...row, role });
  const memberWhere = (baseId: string, userId: string) => and(eq(baseMembers.baseId, baseId), eq(baseMembers.userId, userId));

  async function load(uow: UnitOfWork, actor: Actor, id: string): Promise<Base> {
    const row = await first(uow.db.select().from(bases).where(eq(bases.id, id)).limit(1));
    if (!row) throw notFound(`Base ${id} not found`);
    return toBase(row, (await access.roleWithin(uow, actor, id)) ?? 'viewer');
  }

  /** Ids of the bases an actor can read: all of them for a system administrator. Reads outside transactions. */
  async function readableBaseIds(actor: Actor): Promise<string[] | 'all'> {
    if (actor.isAdmin) return 'all';
    return (await store.db.select({ id: baseMembers.baseId }).from(baseMembers).where(eq(baseMembers.userId, actor.id))).map((r) => r.id);
  }

  /** Inside a transaction: deletes a base with the storage of its tables. */
  async function dropBase(tx: UnitOfWork, id: string) {
    const tableIds = (await tx.db.select({ id: tables.id }).from(tables).where(eq(tables.baseId, id))).map((t) => t.id);
    for (const tableId of tableIds) {
      const defs = (await tx.db.select().from(fields).where(eq(fields.tableId, tableId))) as FieldDef[];
      await tx.records.dropTable(tableId, defs);
    }
    await tx.records.dropBase(id);
    await tx.db.update(users).set({ defaultBaseId: null }).where(eq(users.defaultBaseId, id));
    // A deleted base is not kept in any trash: its trash goes with it.
    await tx.db.delete(store.schema.trash).where(eq(store.schema.trash.baseId, id));
    await tx.db.delete(bases).where(eq(bases.id, id)); // tables, fields and members cascade
  }

  /**
   * Inside a transaction, before a user is deleted: bases where they are the only member go with them;
   * a base they alone own but share with others must get another owner first (409).
   */
  async function releaseUser(tx: UnitOfWork, userId: string): Promise<void> {
    const owned = await tx.db.select({ baseId: baseMembers.baseId }).from(baseMembers).where(and(eq(baseMembers.userId, userId), eq(baseMembers.role, 'owner')));
    for (const { baseId } of owned) {
      const members = await tx.db.select().from(baseMembers).where(eq(baseMembers.baseId, baseId));
      if (members.some((m) => m.userId !== userId && m.role === 'owner')) continue;
      if (members.length === 1) {
        await dropBase(tx, baseId);
        continue;
      }
      const name = (await first(tx.db.select({ name: bases.name }).from(bases).where(eq(bases.id, baseId)).limit(1)))?.name;
      throw conflict(`The user is the only owner of base ${baseId} ("${name}"), which has other members: make one of them owner first`);
    }
  }

  async function assertAnotherOwner(tx: UnitOfWork, baseId: string, userId: string) {
    const owners = await tx.db.select({ userId: baseMembers.userId }).from(baseMembers).where(and(eq(baseMembers.baseId, baseId), eq(baseMembers.role, 'owner')));
    if (!owners.some((o) => o.userId !== userId)) throw conflict('A base must keep at least one owner');
  }

  async function memberOf(tx: UnitOfWork, baseId: string, userId: string): Promise<Member> {
    return (await first(
      tx.db
        .select({ userId: baseMembers.userId, email: users.email, name: users.name, role: baseMembers.role, createdAt: baseMembers.createdAt })
        .from(baseMembers)
        .innerJoin(users, eq(users.id, baseMembers.userId))
        .where(memberWhere(baseId, userId))
        .limit(1),
    )) as Member;
  }

  return {
    readableBaseIds,
    releaseUser,

    async listBases(actor: Actor, page?: number | null, pageSize?: number | null): Promise<Page<Base>> {
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      const ids = await readableBaseIds(actor);
      const where = ids === 'all' ? undefined : inArray(bases.id, ids);
      const rows = await store.db.select().from(bases).where(where).orderBy(asc(bases.createdAt), asc(bases.id)).limit(p.pageSize).offset(p.offset);
      const total = (await first(store.db.select({ n: count() }).from(bases).where(where)))!.n;
      const items = await Promise.all(rows.map(async (r) => toBase(r, (await access.roleIn(actor, r.id))!)));
      return { items, total, page: p.page, pageSize: p.pageSize };
    },

    async getBase(actor: Actor, id: string): Promise<Base> {
      return load(store, actor, id);
    },

    async createBase(actor: Actor, input: { name: unknown; description?: unknown }): Promise<Base> {
      const name = checkName(input.name);
      const description = checkDescription(input.description);
      return store.transaction(async (tx) => {
        const now = nowIso();
        const id = newId('bse');
        await tx.db.insert(bases).values({ id, name, description, createdAt: now, updatedAt: now });
        await tx.db.insert(baseMembers).values({ baseId: id, userId: actor.id, role: 'owner', createdAt: now });
        return load(tx, actor, id);
      });
    },

    async updateBase(actor: Actor, id: string, input: { name?: unknown; description?: unknown }): Promise<Base> {
      const changes: Partial<Schema['bases']['$inferInsert']> = {};
      if (input.name !== undefined) changes.name = checkName(input.name);
      if (input.description !== undefined) changes.description = checkDescription(input.description);
      return store.transaction(async (tx) => {
        await load(tx, actor, id);
        await tx.db.update(bases).set({ ...changes, updatedAt: nowIso() }).where(eq(bases.id, id));
        return load(tx, actor, id);
      });
    },

    async deleteBase(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
      return store.transaction(async (tx) => {
        await load(tx, actor, id);
        await dropBase(tx, id);
        return { id, deleted: true as const };
      });
    },

    async listMembers(actor: Actor, baseId: string): Promise<Member[]> {
      await load(store, actor, baseId);
      return (await store.db
        .select({ userId: baseMembers.userId, email: users.email, name: users.name, role: baseMembers.role, createdAt: baseMembers.createdAt })
        .from(baseMembers)
        .innerJoin(users, eq(users.id, baseMembers.userId))
        .where(eq(baseMembers.baseId, baseId))
        .orderBy(asc(baseMembers.createdAt))) as Member[];
    },

    async setMember(actor: Actor, baseId: string, userId: string, role: unknown): Promise<Member> {
      if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
        throw badRequest(`role must be one of ${ROLES.join(', ')}`, [{ field: 'role', message: `must be one of ${ROLES.join(', ')}` }]);
      }
      return store.transaction(async (tx) => {
        await load(tx, actor, baseId);
        if (!(await first(tx.db.select({ id: users.id }).from(users).where(eq(users.id, userId)).limit(1)))) throw notFound(`User ${userId} not found`);
        const current = await first(tx.db.select().from(baseMembers).where(memberWhere(baseId, userId)).limit(1));
        const callerRole = await access.roleWithin(tx, actor, baseId);
        // Only an owner hands out ownership or changes an owner.
        if ((role === 'owner' || current?.role === 'owner') && callerRole !== 'owner') throw forbidden('Only an owner can grant or change the owner role');
        if (current?.role === 'owner' && role !== 'owner') await assertAnotherOwner(tx, baseId, userId);
        if (current) await tx.db.update(baseMembers).set({ role: role as Role }).where(memberWhere(baseId, userId));
        else await tx.db.insert(baseMembers).values({ baseId, userId, role: role as Role, createdAt: nowIso() });
        return memberOf(tx, baseId, userId);
      });
    },

    async removeMember(actor: Actor, baseId: string, userId: string): Promise<{ userId: string; removed: true }> {
      return store.transaction(async (tx) => {
        await load(tx, actor, baseId);
        const current = await first(tx.db.select().from(baseMembers).where(memberWhere(baseId, userId)).limit(1));
        if (!current) throw notFound(`User ${userId} is not a member of base ${baseId}`);
        if (current.role === 'owner') {
          if ((await access.roleWithin(tx, actor, baseId)) !== 'owner') throw forbidden('Only an owner can remove an owner');
          await assertAnotherOwner(tx, baseId, userId);
        }
        await tx.db.delete(baseMembers).where(memberWhere(baseId, userId));
        return { userId, removed: true as const };
      });
    },
  };
}

export type BaseService = ReturnType<typeof createBaseService>;
