// Base roles: who may do what in a base (contract section 2). Used by the schema's scope checks.
import { and, eq, sql } from 'drizzle-orm';
import { readCache } from '../db/read-cache.js';
import { first, type UnitOfWork } from '../db/store.js';
import { notFound } from '../errors.js';
import type { Actor, Deps } from './deps.js';

export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export const roleRank = (role: Role) => ROLES.indexOf(role);
export const atLeast = (role: Role | null, min: Role) => role !== null && roleRank(role) >= roleRank(min);

export function createAccess({ store }: Deps) {
  const { baseMembers, bases, fields, tables, views, webhooks, workflows } = store.schema;
  // Prepared once on the store (reads outside transactions): every scope check runs them.
  const roleQuery = store.db
    .select({ role: baseMembers.role })
    .from(baseMembers)
    .where(and(eq(baseMembers.baseId, sql.placeholder('baseId')), eq(baseMembers.userId, sql.placeholder('userId'))))
    .prepare();
  const baseExists = store.db.select({ id: bases.id }).from(bases).where(eq(bases.id, sql.placeholder('id'))).prepare();
  const tableBase = store.db.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, sql.placeholder('id'))).prepare();
  const fieldTable = store.db.select({ tableId: fields.tableId }).from(fields).where(eq(fields.id, sql.placeholder('id'))).prepare();
  const workflowTable = store.db.select({ tableId: workflows.tableId }).from(workflows).where(eq(workflows.id, sql.placeholder('id'))).prepare();
  const viewTable = store.db.select({ tableId: views.tableId }).from(views).where(eq(views.id, sql.placeholder('id'))).prepare();
  const webhookBase = store.db.select({ baseId: webhooks.baseId }).from(webhooks).where(eq(webhooks.id, sql.placeholder('id'))).prepare();

  /** The role that needs no query: a workflow's and a system administrator's; undefined for a user or an application. */
  function fixedRole(actor: Actor, baseId: string): Role | null | undefined {
    if (actor.kind === 'workflow') return actor.baseId === baseId ? 'editor' : null;
    if (actor.kind === 'share') return null;
    if (actor.isAdmin) return 'owner';
    return undefined;
  }

  /**
   * The actor's role in a base, or null for a non-member; a system administrator is owner of every base, and a
   * workflow is editor of the base of its own table (its steps write records there) and a stranger elsewhere.
   * Reads outside transactions.
   */
  async function roleIn(actor: Actor, baseId: string): Promise<Role | null> {
    const fixed = fixedRole(actor, baseId);
    if (fixed !== undefined) return fixed;
    return memberRole(`${baseId} ${actor.id}`);
  }
  // Cached (read-cache.ts): every scope check of a request asks, and ids never contain a space.
  const memberRole = readCache(store, async (key) => {
    const [baseId, userId] = key.split(' ');
    const [row] = await roleQuery.execute({ baseId, userId });
    return (row?.role as Role | undefined) ?? null;
  });
  const baseFound = readCache(store, async (id) => !!(await baseExists.execute({ id }))[0]);
  const baseOfTable = readCache(store, async (id) => (await tableBase.execute({ id }))[0]?.baseId ?? null);

  /** The base a table, a field, a workflow, a webhook or a base id refers to; 404 naming the missing thing. Reads outside transactions. */
  async function baseOf(ref: { baseId?: string; tableId?: string; fieldId?: string; workflowId?: string; webhookId?: string; viewId?: string }): Promise<string> {
    if (ref.baseId !== undefined) {
      if (!(await baseFound(ref.baseId))) throw notFound(`Base ${ref.baseId} not found`);
      return ref.baseId;
    }
    if (ref.tableId !== undefined) {
      const baseId = await baseOfTable(ref.tableId);
      if (baseId === null) throw notFound(`Table ${ref.tableId} not found`);
      return baseId;
    }
    if (ref.fieldId !== undefined) {
      const [row] = await fieldTable.execute({ id: ref.fieldId });
      if (!row) throw notFound(`Field ${ref.fieldId} not found`);
      return baseOf({ tableId: row.tableId });
    }
    if (ref.workflowId !== undefined) {
      const [row] = await workflowTable.execute({ id: ref.workflowId });
      if (!row) throw notFound(`Workflow ${ref.workflowId} not found`);
      return baseOf({ tableId: row.tableId });
    }
    if (ref.viewId !== undefined) {
      const [row] = await viewTable.execute({ id: ref.viewId });
      if (!row) throw notFound(`View ${ref.viewId} not found`);
      return baseOf({ tableId: row.tableId });
    }
    if (ref.webhookId !== undefined) {
      const [row] = await webhookBase.execute({ id: ref.webhookId });
      if (!row) throw notFound(`Webhook ${ref.webhookId} not found`);
      return row.baseId;
    }
    throw new Error('baseOf needs a reference');
  }

  return {
    roleIn,
    /** Whether the actor may still read the base (a subscription asks again between events). */
    async canRead(actor: Actor | null, baseId: string): Promise<boolean> {
      return !!actor && (await roleIn(actor, baseId)) !== null;
    },
    /**
     * `roleIn` as a step of a unit of work: inside a transaction it reads through it, so it sees the memberships the
     * transaction has written; outside it is `roleIn`.
     */
    async roleWithin(uow: UnitOfWork, actor: Actor, baseId: string): Promise<Role | null> {
      if (!uow.inTransaction) return roleIn(actor, baseId);
      const fixed = fixedRole(actor, baseId);
      if (fixed !== undefined) return fixed;
      const row = await first(uow.db.select({ role: baseMembers.role }).from(baseMembers).where(and(eq(baseMembers.baseId, baseId), eq(baseMembers.userId, actor.id))).limit(1));
      return (row?.role as Role | undefined) ?? null;
    },
    baseOf,
  };
}

export type Access = ReturnType<typeof createAccess>;
