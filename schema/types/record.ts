// Records of a table: pages with filter and sort, single writes and all-or-nothing batches.
import type { ApiRecord } from '../../src/domain/records.js';
import { builder } from '../builder.js';
import type { Context } from '../context.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

export const Record = builder.objectRef<ApiRecord>('Record').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    // Exposed, not resolved: graphql-jit reads an exposed property inline, where a resolver ran per record with its own
    // resolve info and closures (most of the garbage the operation itself made on a 100-record page).
    fields: t.expose('fields', { type: 'JSON', description: 'Values keyed by field name; every field present, null when empty' }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
    createdBy: t.exposeString('createdBy', { nullable: true }),
    updatedBy: t.exposeString('updatedBy', { nullable: true }),
  }),
});
const RecordPage = pageOf<ApiRecord>('Record', Record);

/** What a batch does with its items. */
export const BatchAction = builder.enumType('BatchAction', {
  values: {
    create: { description: 'Items hold `fields`' },
    update: { description: 'Items hold `id` and `fields`' },
    delete: { description: 'Items hold `id`' },
  },
});

const BatchResult = builder.objectRef<{ items?: ApiRecord[]; deleted?: string[] }>('BatchResult').implement({
  fields: (t) => ({
    items: t.field({ type: [Record], nullable: true, description: 'The written records (create and update)', resolve: (b) => b.items ?? null }),
    deleted: t.idList({ nullable: true, description: 'The deleted ids (delete)', resolve: (b) => b.deleted ?? null }),
  }),
});

/** A record list through a view of its table (contract section 13). */
async function listThroughView(a: { tableId: string; viewId?: string | null; page?: number | null; pageSize?: number | null; filter?: unknown; sort?: unknown }, ctx: Context) {
  const view = await ctx.services.views.viewOfTable(a.viewId!, a.tableId, ctx.actor);
  return ctx.services.records.listRecords(a.tableId, { ...a, view: (fields) => ctx.services.views.queryOf(view, fields) });
}

builder.queryFields((t) => ({
  records: t.field({
    type: RecordPage,
    args: {
      tableId: t.arg.id({ required: true }),
      ...pageArgs(t.arg),
      filter: t.arg({ type: 'JSON', required: false, description: 'Filter object (or its JSON text), contract section 4' }),
      sort: t.arg({ type: 'JSON', required: false, description: 'Sort keys (or their JSON text), contract section 4' }),
      viewId: t.arg.id({ required: false, description: 'A view of the table: its filter ANDed with filter, its sort unless sort is given, its visible fields' }),
    },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'viewer' } }),
    // Without a view the list is called as before (no async wrapper): its hot path stays the same.
    resolve: (_r, a, ctx) => (a.viewId ? listThroughView(a, ctx) : ctx.services.records.listRecords(a.tableId, a)),
  }),
  searchRecords: t.field({
    type: RecordPage,
    description: 'Records holding every word of q in a text-like value (case-insensitive), in creation order',
    args: { tableId: t.arg.id({ required: true }), q: t.arg.string({ required: true }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.records.searchRecords(a.tableId, { q: a.q, page: a.page, pageSize: a.pageSize }),
  }),
  record: t.field({
    type: Record,
    args: { tableId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.records.getRecord(a.tableId, a.id),
  }),
}));

builder.mutationFields((t) => ({
  createRecord: t.field({
    type: Record,
    args: { tableId: t.arg.id({ required: true }), fields: t.arg({ type: 'JSON', required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.records.createRecord(ctx.actor, a.tableId, a.fields),
  }),
  updateRecord: t.field({
    type: Record,
    args: { tableId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), fields: t.arg({ type: 'JSON', required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.records.updateRecord(ctx.actor, a.tableId, a.id, a.fields),
  }),
  deleteRecord: t.field({
    type: DeleteResult,
    args: { tableId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.records.deleteRecord(ctx.actor, a.tableId, a.id),
  }),
  batchRecords: t.field({
    type: BatchResult,
    description: 'create: items hold `fields`; update: items hold `id` and `fields`; delete: items hold `id`. All or nothing, 1 to 1000 items.',
    args: { tableId: t.arg.id({ required: true }), action: t.arg({ type: BatchAction, required: true }), records: t.arg({ type: 'JSON', required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.records.batchRecords(ctx.actor, a.tableId, a.action, a.records),
  }),
}));
