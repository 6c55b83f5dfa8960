// Fields of a table.
import type { FieldDef } from '../../src/fields/field-type.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

export const Field = builder.objectRef<FieldDef>('Field').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    tableId: t.exposeID('tableId'),
    name: t.exposeString('name'),
    type: t.exposeString('type'),
    required: t.exposeBoolean('required'),
    options: t.exposeStringList('options', { nullable: true }),
    config: t.field({ type: 'JSON', resolve: (f) => f.config }),
    indexed: t.exposeBoolean('indexed'),
  }),
});
const FieldPage = pageOf<FieldDef>('Field', Field);

/** Loose on purpose: the field service validates every key and names the one that is wrong. */
const FieldInput = builder.inputType('FieldInput', {
  fields: (t) => ({
    name: t.string({ required: false }),
    type: t.string({ required: false }),
    required: t.boolean({ required: false }),
    options: t.field({ type: 'JSON', required: false }),
    config: t.field({ type: 'JSON', required: false }),
    indexed: t.boolean({ required: false }),
  }),
});

builder.queryFields((t) => ({
  fields: t.field({
    type: FieldPage,
    args: { tableId: t.arg.id({ required: true }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => ({ baseRole: { tableId: String(a.tableId), role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.fields.listFields(String(a.tableId), a.page, a.pageSize),
  }),
}));

builder.mutationFields((t) => ({
  createField: t.field({
    type: Field,
    args: { tableId: t.arg.id({ required: true }), input: t.arg({ type: FieldInput, required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: String(a.tableId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.fields.createField(String(a.tableId), a.input),
  }),
  updateField: t.field({
    type: Field,
    args: { tableId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), input: t.arg({ type: FieldInput, required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: String(a.tableId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.fields.updateField(String(a.tableId), String(a.id), a.input),
  }),
  deleteField: t.field({
    type: DeleteResult,
    args: { tableId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: String(a.tableId), role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.fields.deleteField(String(a.tableId), String(a.id)),
  }),
}));
