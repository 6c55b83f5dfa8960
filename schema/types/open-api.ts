// The Open API for applications: bases in the allow-list, table and field structure, records keyed by field id.
import type { AppActor } from '../../src/domain/deps.js';
import type { ApiRecord } from '../../src/domain/records.js';
import type { OpenBase, OpenTable } from '../../src/domain/open-api.js';
import type { FieldDef } from '../../src/fields/field-type.js';
import { builder } from '../builder.js';
import { DeleteResult, pageOf } from './common.js';
import { Field } from './field.js';

const baseFields = (t: any) => ({
  id: t.exposeID('id'),
  name: t.exposeString('name'),
  description: t.exposeString('description'),
  createdAt: t.exposeString('createdAt'),
  updatedAt: t.exposeString('updatedAt'),
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

const where = (t: any) => ({ baseId: t.arg.id({ required: true }), tableId: t.arg.id({ required: true }) });
const paging = (t: any) => ({ page: t.arg.int({ required: false }), perPage: t.arg.int({ required: false }) });

builder.queryFields((t) => ({
  openBases: t.field({
    type: [OpenBaseRef], authScopes: { app: { scope: 'base:read' } },
    resolve: (_r, _a, ctx) => ctx.services.openApi.listBases(ctx.actor as AppActor),
  }),
  openBase: t.field({
    type: OpenBaseDetail, args: { baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ app: { scope: 'base:read', baseId: String(a.baseId) } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.getBase(String(a.baseId)),
  }),
  openTables: t.field({
    type: [OpenTableRef], args: { baseId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ app: { scope: 'table:read', baseId: String(a.baseId) } }),
    resolve: (_r, a, ctx) => ctx.services.openApi.listTables(String(a.baseId)),
  }),
  openTable: t.field({
    type: OpenTableDetail, args: where(t),
    authScopes: (_r, a: any) => ({ app: { scope: 'table:read', baseId: String(a.baseId) } }),
    resolve: (_r, a: any, ctx) => ctx.services.openApi.getTable(String(a.baseId), String(a.tableId)),
  }),
  openFields: t.field({
    type: [Field], args: where(t),
    authScopes: (_r, a: any) => ({ app: { scope: 'field:read', baseId: String(a.baseId) } }),
    resolve: (_r, a: any, ctx) => ctx.services.openApi.listFields(String(a.baseId), String(a.tableId)),
  }),
  openRecords: t.field({
    type: OpenRecordPage,
    args: { ...where(t), ...paging(t), filter: t.arg({ type: 'JSON', required: false }), sort: t.arg({ type: 'JSON', required: false }) },
    authScopes: (_r, a: any) => ({ app: { scope: 'record:read', baseId: String(a.baseId) } }),
    resolve: (_r, a: any, ctx) => ctx.services.openApi.listRecords(String(a.baseId), String(a.tableId), a),
  }),
  openSearchRecords: t.field({
    type: OpenRecordPage,
    args: { ...where(t), ...paging(t), q: t.arg.string({ required: false }) },
    authScopes: (_r, a: any) => ({ app: { scope: 'record:read', baseId: String(a.baseId) } }),
    resolve: (_r, a: any, ctx) => ctx.services.openApi.searchRecords(String(a.baseId), String(a.tableId), a),
  }),
  openRecord: t.field({
    type: OpenRecord, args: { ...where(t), recordId: t.arg.id({ required: true }) },
    authScopes: (_r, a: any) => ({ app: { scope: 'record:read', baseId: String(a.baseId) } }),
    resolve: (_r, a: any, ctx) => ctx.services.openApi.getRecord(String(a.baseId), String(a.tableId), String(a.recordId)),
  }),
}));

builder.mutationFields((t) => ({
  openCreateRecord: t.field({
    type: OpenRecord, args: { ...where(t), values: t.arg({ type: 'JSON', required: true }) },
    extensions: { recordWrite: true },
    authScopes: (_r, a: any) => ({ app: { scope: 'record:write', baseId: String(a.baseId) } }),
    resolve: (_r, a: any, ctx) => ctx.services.openApi.createRecord(ctx.actor as AppActor, String(a.baseId), String(a.tableId), a.values, ctx.requestId),
  }),
  openUpdateRecord: t.field({
    type: OpenRecord, args: { ...where(t), recordId: t.arg.id({ required: true }), values: t.arg({ type: 'JSON', required: true }) },
    extensions: { recordWrite: true },
    authScopes: (_r, a: any) => ({ app: { scope: 'record:write', baseId: String(a.baseId) } }),
    resolve: (_r, a: any, ctx) => ctx.services.openApi.updateRecord(ctx.actor as AppActor, String(a.baseId), String(a.tableId), String(a.recordId), a.values, ctx.requestId),
  }),
  openDeleteRecord: t.field({
    type: DeleteResult, args: { ...where(t), recordId: t.arg.id({ required: true }) },
    extensions: { recordWrite: true },
    authScopes: (_r, a: any) => ({ app: { scope: 'record:write', baseId: String(a.baseId) } }),
    resolve: (_r, a: any, ctx) => ctx.services.openApi.deleteRecord(ctx.actor as AppActor, String(a.baseId), String(a.tableId), String(a.recordId), ctx.requestId),
  }),
}));
