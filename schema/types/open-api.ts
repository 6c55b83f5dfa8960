// The Open API for applications: bases in the allow-list, table and field structure, records keyed by field id.
import type { AppActor } from '../../src/domain/deps.js';
import type { ApiRecord } from '../../src/domain/records.js';
import type { OpenBase, OpenTable } from '../../src/domain/open-api.js';
import type { FieldDef } from '../../src/fields/field-type.js';
import type { ArgBuilder, ObjectFieldBuilder } from '@pothos/core';
import { builder } from '../builder.js';
import { DeleteResult, pageOf, type BuilderTypes } from './common.js';
import { Field } from './field.js';

/** The fields every base and table shape shares. */
const baseFields = <S extends OpenBase>(t: ObjectFieldBuilder<BuilderTypes, S>) => ({
  id: t.id({ resolve: (x) => x.id }),
  name: t.string({ resolve: (x) => x.name }),
  description: t.string({ resolve: (x) => x.description }),
  createdAt: t.string({ resolve: (x) => x.createdAt }),
  updatedAt: t.string({ resolve: (x) => x.updatedAt }),
});

const OpenTableRef = builder.objectRef<OpenTable>('OpenTable').implement({
  fields: (t) => ({ ...baseFields(t), baseId: t.exposeID('baseId') }),
});
const OpenTableDetail = builder.objectRef<OpenTable & { fields: FieldDef[] }>('OpenTableDetail').implement({
  fields: (t) => ({ ...baseFields(t), baseId: t.exposeID('baseId'), fields: t.field({ type: [Field], resolve: (x) => x.fields }) }),
});
const OpenBaseRef = builder.objectRef<OpenBase>('OpenBase').implement({ fields: (t) => baseFields(t) });
const OpenBaseDetail = builder.objectRef<OpenBase & { tables: OpenTable[] }>('OpenBaseDetail').implement({
  fields: (t) => ({ ...baseFields(t), tables: t.field({ type: [OpenTableRef], resolve: (x) => x.tables }) }),
});
const OpenRecord = builder.objectRef<ApiRecord>('OpenRecord').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    values: t.field({ type: 'JSON', description: 'Values keyed by field id', resolve: (r) => r.fields }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
    createdBy: t.exposeString('createdBy', { nullable: true }),
    updatedBy: t.exposeString('updatedBy', { nullable: true }),
  }),
});
const OpenRecordPage = pageOf<ApiRecord>('OpenRecord', OpenRecord);

const where = (arg: ArgBuilder<BuilderTypes>) => ({ baseId: arg.id({ required: true }), tableId: arg.id({ required: true }) });
const paging = (arg: ArgBuilder<BuilderTypes>) => ({ page: arg.int({ required: false }), perPage: arg.int({ required: false }) });

builder.queryFields((t) => ({
  openBases: t.field({
    type: [OpenBaseRef], authScopes: { app: { scope: 'base:read' } },
    resolve: (_r, _a, ctx) => ctx.services.openApi.listBases(ctx.actor as AppActor),
  }),
  openBase: t.field({
    type: OpenBaseDetail, args: { baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ app: { scope: 'base:read', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.getBase(a.baseId),
  }),
  openTables: t.field({
    type: [OpenTableRef], args: { baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ app: { scope: 'table:read', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.listTables(a.baseId),
  }),
  openTable: t.field({
    type: OpenTableDetail, args: where(t.arg),
    authScopes: (_r, a) => ({ app: { scope: 'table:read', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.getTable(a.baseId, a.tableId),
  }),
  openFields: t.field({
    type: [Field], args: where(t.arg),
    authScopes: (_r, a) => ({ app: { scope: 'field:read', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.listFields(a.baseId, a.tableId),
  }),
  openRecords: t.field({
    type: OpenRecordPage,
    args: { ...where(t.arg), ...paging(t.arg), filter: t.arg({ type: 'JSON', required: false }), sort: t.arg({ type: 'JSON', required: false }), viewId: t.arg.id({ required: false }) },
    authScopes: (_r, a) => ({ app: { scope: 'record:read', baseId: a.baseId } }),
    resolve: async (_r, a, ctx) => {
      if (!a.viewId) return ctx.services.openApi.listRecords(a.baseId, a.tableId, a);
      const view = await ctx.services.views.viewOfTable(a.viewId, a.tableId, ctx.actor);
      return ctx.services.openApi.listRecords(a.baseId, a.tableId, { ...a, view: (fields) => ctx.services.views.queryOf(view, fields) });
    },
  }),
  openSearchRecords: t.field({
    type: OpenRecordPage,
    args: { ...where(t.arg), ...paging(t.arg), q: t.arg.string({ required: false }) },
    authScopes: (_r, a) => ({ app: { scope: 'record:read', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.searchRecords(a.baseId, a.tableId, { q: a.q, page: a.page, perPage: a.perPage }),
  }),
  openRecord: t.field({
    type: OpenRecord, args: { ...where(t.arg), recordId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ app: { scope: 'record:read', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.getRecord(a.baseId, a.tableId, a.recordId),
  }),
}));

builder.mutationFields((t) => ({
  openCreateRecord: t.field({
    type: OpenRecord, args: { ...where(t.arg), values: t.arg({ type: 'JSON', required: true }) },
    extensions: { recordWrite: true },
    authScopes: (_r, a) => ({ app: { scope: 'record:write', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.createRecord(ctx.actor as AppActor, a.baseId, a.tableId, a.values, ctx.requestId),
  }),
  openUpdateRecord: t.field({
    type: OpenRecord, args: { ...where(t.arg), recordId: t.arg.id({ required: true }), values: t.arg({ type: 'JSON', required: true }) },
    extensions: { recordWrite: true },
    authScopes: (_r, a) => ({ app: { scope: 'record:write', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.updateRecord(ctx.actor as AppActor, a.baseId, a.tableId, a.recordId, a.values, ctx.requestId),
  }),
  openDeleteRecord: t.field({
    type: DeleteResult, args: { ...where(t.arg), recordId: t.arg.id({ required: true }) },
    extensions: { recordWrite: true },
    authScopes: (_r, a) => ({ app: { scope: 'record:write', baseId: a.baseId } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.deleteRecord(ctx.actor as AppActor, a.baseId, a.tableId, a.recordId, ctx.requestId),
  }),
}));
