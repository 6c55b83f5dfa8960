// Views of a table (contract section 13) and the public side of a shared view: its description, records and form.
import type { View as ViewShape } from '../../src/domain/views.js';
import type { SharedRecord } from '../../src/domain/shares.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

export const ViewType = builder.enumType('ViewType', { values: ['grid', 'form', 'kanban', 'gallery', 'calendar'] as const });

export const View = builder.objectRef<ViewShape>('View').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    tableId: t.exposeID('tableId'),
    name: t.exposeString('name'),
    type: t.field({ type: ViewType, resolve: (v) => v.type as 'grid' }),
    filter: t.field({ type: 'JSON', nullable: true, description: 'Section 4 filter, fields by id', resolve: (v) => v.filter ?? null }),
    sort: t.field({ type: 'JSON', nullable: true, description: 'Section 4 sort keys, fields by id', resolve: (v) => v.sort ?? null }),
    hiddenFields: t.idList({ resolve: (v) => v.hiddenFields }),
    fieldOrder: t.idList({ resolve: (v) => v.fieldOrder }),
    config: t.field({ type: 'JSON', description: 'kanban {group_field}, calendar {date_field}, gallery {cover_field}, form {title, description, fields, submit_message}; grid {column_widths?}', resolve: (v) => v.config }),
    personal: t.exposeBoolean('personal'),
    locked: t.exposeBoolean('locked'),
    createdBy: t.exposeString('createdBy', { nullable: true }),
    shareId: t.exposeString('shareId', { nullable: true, description: 'Set while the view is shared by link' }),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
  }),
});

const ViewInput = builder.inputType('ViewInput', {
  fields: (t) => ({
    name: t.string({ required: false }),
    type: t.field({ type: ViewType, required: false }),
    filter: t.field({ type: 'JSON', required: false }),
    sort: t.field({ type: 'JSON', required: false }),
    hiddenFields: t.idList({ required: false }),
    fieldOrder: t.idList({ required: false }),
    config: t.field({ type: 'JSON', required: false }),
    personal: t.boolean({ required: false }),
    locked: t.boolean({ required: false }),
  }),
});

const ShareLink = builder.objectRef<{ shareId: string; url: string }>('ShareLink').implement({
  fields: (t) => ({ shareId: t.exposeString('shareId'), url: t.exposeString('url') }),
});

const SharedView = builder.objectRef<{ name: string; type: string; config: unknown; fields: unknown[] }>('SharedView').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    type: t.exposeString('type'),
    config: t.field({ type: 'JSON', resolve: (v) => v.config }),
    fields: t.field({ type: 'JSON', description: 'Visible fields [{id, name, type, options}]', resolve: (v) => v.fields }),
  }),
});
const SharedRecordRef = builder.objectRef<SharedRecord>('SharedRecord').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    fields: t.field({ type: 'JSON', resolve: (r) => r.fields }),
    createdAt: t.exposeString('createdAt'),
  }),
});
const SharedRecordPage = pageOf<SharedRecord>('SharedRecord', SharedRecordRef);
const Submitted = builder.objectRef<{ id: string }>('SubmittedRecord').implement({ fields: (t) => ({ id: t.exposeID('id') }) });

const shareLink = (v: ViewShape, publicUrl: string) => ({ shareId: v.shareId!, url: `${publicUrl.replace(/\/$/, '')}/share/${v.shareId}` });

builder.queryFields((t) => ({
  views: t.field({
    type: [View],
    description: 'The views of a table the caller may see (others\' personal views are left out); a table always has one',
    args: { tableId: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.views.list(a.tableId, ctx.actor),
  }),
  view: t.field({
    type: View,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { viewId: a.id, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.views.getView(a.id, ctx.actor),
  }),
  sharedView: t.field({
    type: SharedView,
    description: 'A view shared by link, without login: its name, type, config and visible fields',
    args: { shareId: t.arg.string({ required: true }) },
    resolve: (_r, a, ctx) => ctx.services.shares.describe(a.shareId),
  }),
  sharedRecords: t.field({
    type: SharedRecordPage,
    description: 'A page of a shared (non-form) view\'s records, visible fields only, without login',
    args: { shareId: t.arg.string({ required: true }), ...pageArgs(t.arg) },
    resolve: (_r, a, ctx) => ctx.services.shares.records(a.shareId, a),
  }),
}));

builder.mutationFields((t) => ({
  createView: t.field({
    type: View,
    args: { tableId: t.arg.id({ required: true }), input: t.arg({ type: ViewInput, required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.views.createView(a.tableId, a.input, ctx.actor),
  }),
  updateView: t.field({
    type: View,
    description: 'Changes a view; a locked one takes a base admin, and only base admins set or clear locked',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: ViewInput, required: true }) },
    authScopes: (_r, a) => ({ baseRole: { viewId: a.id, role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.views.updateView(a.id, a.input, ctx.actor),
  }),
  deleteView: t.field({
    type: DeleteResult,
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { viewId: a.id, role: 'editor' } }),
    resolve: (_r, a, ctx) => ctx.services.views.deleteView(a.id, ctx.actor),
  }),
  shareView: t.field({
    type: ShareLink,
    description: 'Shares a view by link (base admins): the share id and the web page\'s URL',
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { viewId: a.id, role: 'admin' } }),
    resolve: async (_r, a, ctx) => shareLink(await ctx.services.views.share(a.id, ctx.actor), ctx.services.deps.config.publicUrl),
  }),
  unshareView: t.field({
    type: View,
    description: 'Stops sharing: the link answers 404 from now on',
    args: { id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { viewId: a.id, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.views.unshare(a.id, ctx.actor),
  }),
  submitSharedForm: t.field({
    type: Submitted,
    description: 'A public form\'s submission, without login: 30 a minute from one address',
    args: { shareId: t.arg.string({ required: true }), fields: t.arg({ type: 'JSON', required: true }) },
    resolve: (_r, a, ctx) => ctx.services.shares.submit(a.shareId, a.fields, ctx.clientAddress),
  }),
}));
