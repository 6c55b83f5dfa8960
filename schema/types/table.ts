// Tables of a base.
import type { Table as TableShape } from '../../src/domain/tables.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';
import { FieldInput } from './field.js';

export const Table = builder.objectRef<TableShape>('Table').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    baseId: t.exposeID('baseId'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});
const TablePage = pageOf<TableShape>('Table', Table);

builder.queryFields((t) => ({
  tables: t.field({
    type: TablePage,
    description: 'The tables of one base, or of every base the caller can read when baseId is absent',
    args: { baseId: t.arg.id({ required: false }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => (a.baseId ? { baseRole: { baseId: a.baseId, role: 'viewer' } } : { loggedIn: true }),
    resolve: (_r, a, ctx) => ctx.services.tables.listTables(ctx.actor!, a.baseId || null, a.page, a.pageSize),
  }),
  table: t.field({
    type: Table,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.id, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.tables.getTable(a.id),
  }),
}));

builder.mutationFields((t) => ({
  createTable: t.field({
    type: Table,
    description: 'Creates a table in baseId, or in the caller\'s default base; `fields` creates fields at once',
    args: {
      baseId: t.arg.id({ required: false }),
      name: t.arg.string({ required: true }),
      description: t.arg.string({ required: false }),
      fields: t.arg({ type: [FieldInput], required: false, description: 'Fields to create with the table, in order (name and type each)' }),
    },
    authScopes: async (_r, a, ctx) =>
      ctx.actor ? { baseRole: { baseId: await ctx.services.tables.targetBase(ctx.actor, a.baseId || null), role: 'admin' } } : { loggedIn: true },
    resolve: async (_r, a, ctx) =>
      ctx.services.tables.createTable(await ctx.services.tables.targetBase(ctx.actor!, a.baseId || null), a, ctx.actor),
  }),
  updateTable: t.field({
    type: Table,
    args: { id: t.arg.id({ required: true }), name: t.arg.string({ required: false }), description: t.arg.string({ required: false }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.id, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.tables.updateTable(a.id, a, ctx.actor),
  }),
  deleteTable: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.id, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.tables.deleteTable(a.id, ctx.actor),
  }),
}));
