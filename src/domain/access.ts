// Base roles: who may do what in a base (contract section 2). Used by the schema's scope checks.
import { and, eq, sql } from 'drizzle-orm';
import { baseMembers, bases, fields, tables, workflows } from '../db/schema.js';
import { notFound } from '../errors.js';
import type { Actor, Deps } from './deps.js';

export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export const roleRank = (role: Role) => ROLES.indexOf(role);
export const atLeast = (role: Role | null, min: Role) => role !== null && roleRank(role) >= roleRank(min);

export function createAccess({ orm }: Deps) {
  const roleQuery = orm
    .select({ role: baseMembers.role })
    .from(baseMembers)
    .where(and(eq(baseMembers.baseId, sql.placeholder('baseId')), eq(baseMembers.userId, sql.placeholder('userId'))))
    .prepare();
  const baseExists = orm.select({ id: bases.id }).from(bases).where(eq(bases.id, sql.placeholder('id'))).prepare();
  const tableBase = orm.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, sql.placeholder('id'))).prepare();
  const fieldTable = orm.select({ tableId: fields.tableId }).from(fields).where(eq(fields.id, sql.placeholder('id'))).prepare();
  const workflowTable = orm.select({ tableId: workflows.tableId }).from(workflows).where(eq(workflows.id, sql.placeholder('id'))).prepare();

  return {
    /**
     * The actor's role in a base, or null for a non-member; a system administrator is owner of every base, and a
     * workflow is editor of the base of its own table (its steps write records there) and a stranger elsewhere.
     */
    roleIn(actor: Actor, baseId: string): Role | null {
      if (actor.kind === 'workflow') return actor.baseId === baseId ? 'editor' : null;
      if (actor.isAdmin) return 'owner';
      return (roleQuery.get({ baseId, userId: actor.id })?.role as Role | undefined) ?? null;
    },
    /** The base a table, a field, a workflow or a base id refers to; 404 naming the missing thing. */
    baseOf(ref: { baseId?: string; tableId?: string; fieldId?: string; workflowId?: string }): string {
      if (ref.baseId !== undefined) {
        if (!baseExists.get({ id: ref.baseId })) throw notFound(`Base ${ref.baseId} not found`);
        return ref.baseId;
      }
      if (ref.tableId !== undefined) {
        const row = tableBase.get({ id: ref.tableId });
        if (!row) throw notFound(`Table ${ref.tableId} not found`);
        return row.baseId;
      }
      if (ref.fieldId !== undefined) {
        const row = fieldTable.get({ id: ref.fieldId });
        if (!row) throw notFound(`Field ${ref.fieldId} not found`);
        return this.baseOf({ tableId: row.tableId });
      }
      if (ref.workflowId !== undefined) {
        const row = workflowTable.get({ id: ref.workflowId });
        if (!row) throw notFound(`Workflow ${ref.workflowId} not found`);
        return this.baseOf({ tableId: row.tableId });
      }
      throw new Error('baseOf needs a reference');
    },
  };
}

export type Access = ReturnType<typeof createAccess>;
