// The trash of a base and record history (contract section 16): editors see and restore records, admins everything.
import type { ApiHistoryEntry, ApiTrashItem } from '../../src/domain/trash.js';
import { builder } from '../builder.js';

const TrashItem = builder.objectRef<ApiTrashItem>('TrashItem').implement({
  description: 'A deleted record, field or table, kept until TRASH_RETENTION_DAYS after its deletion',
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.exposeString('type', { description: 'record|field|table' }),
    name: t.exposeString('name'),
    tableId: t.id({ resolve: (i) => i.table_id }),
    deletedAt: t.string({ resolve: (i) => i.deleted_at }),
    deletedBy: t.id({ nullable: true, resolve: (i) => i.deleted_by }),
  }),
});

const Restored = builder.objectRef<{ id: string; type: string; item_id: string }>('Restored').implement({
  fields: (t) => ({ id: t.exposeID('id'), type: t.exposeString('type'), itemId: t.id({ resolve: (r) => r.item_id }) }),
});

const HistoryEntry = builder.objectRef<ApiHistoryEntry>('HistoryEntry').implement({
  description: 'One change of a record, from the event log',
  fields: (t) => ({
    at: t.exposeString('at'),
    type: t.exposeString('type', { description: 'created|updated|deleted (a restore is a creation)' }),
    actor: t.field({ type: 'JSON', description: '{type: user|app|workflow|import, id}', resolve: (e) => e.actor }),
    changes: t.field({ type: 'JSON', description: '{<field name>: {before, after}}', resolve: (e) => e.changes }),
  }),
});

/** Who may act on an entry: a record needs an editor of its base, a field or table an admin (404 for an unknown entry). */
const roleFor = async (id: string, ctx: { services: { trash: { describe(id: string): Promise<{ baseId: string; type: string }> } } }, record: 'editor' | 'admin') => {
  const item = await ctx.services.trash.describe(id);
  return { baseRole: { baseId: item.baseId, role: item.type === 'record' ? record : ('admin' as const) } };
};

builder.queryFields((t) => ({
  trash: t.field({
    type: [TrashItem],
    description: 'The trash of a base, newest first: records for editors, everything for admins',
    args: { baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { baseId: a.baseId, role: 'editor' } }),
    resolve: async (_r, a, ctx) => {
      const admin = ctx.actor?.kind === 'user' && (ctx.actor.isAdmin || ['admin', 'owner'].includes((await ctx.services.access.roleIn(ctx.actor, a.baseId)) ?? ''));
      return ctx.services.trash.list(a.baseId, admin);
    },
  }),
  recordHistory: t.field({
    type: [HistoryEntry],
    description: 'Changes of a record, newest first (kept HISTORY_RETENTION_DAYS)',
    args: { tableId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.trash.history(a.tableId, a.id),
  }),
}));

builder.mutationFields((t) => ({
  restoreTrashItem: t.field({
    type: Restored,
    description: 'Brings a deleted item back with its id and values; 409 when its name or id is taken again',
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a, ctx) => roleFor(a.id, ctx, 'editor'),
    resolve: (_r, a, ctx) => ctx.services.trash.restore(ctx.actor, a.id),
  }),
  purgeTrashItem: t.field({
    type: builder.objectRef<{ id: string; deleted: true }>('Purged').implement({ fields: (f) => ({ id: f.exposeID('id'), deleted: f.boolean({ resolve: () => true }) }) }),
    description: 'Removes a trash entry for good (base admins)',
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a, ctx) => roleFor(a.id, ctx, 'admin'),
    resolve: (_r, a, ctx) => ctx.services.trash.purge(a.id),
  }),
}));
