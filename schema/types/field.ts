// Fields of a table.
import type { FieldDef, FieldTypeName } from '../../src/fields/field-type.js';
import { FIELD_TYPES } from '../../src/fields/registry.js';
import { builder } from '../builder.js';
import { DeleteResult, pageArgs, pageOf } from './common.js';

/** Every type of the field registry, under its own name (the wire value of every door). */
export const FieldType = builder.enumType('FieldType', {
  description: 'A field type of the field registry',
  values: Object.fromEntries(
    Object.values(FIELD_TYPES).map((type) => [
      type.name,
      { description: `${type.readOnly ? 'Read-only: set by the service. ' : ''}Filter operators: ${type.operators.join(', ')}` },
    ]),
  ) as Record<FieldTypeName, { description: string }>,
});

export const Field = builder.objectRef<FieldDef>('Field').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    tableId: t.exposeID('tableId'),
    name: t.exposeString('name'),
    type: t.expose('type', { type: FieldType }),
    required: t.exposeBoolean('required'),
    options: t.exposeStringList('options', { nullable: true }),
    config: t.field({ type: 'JSON', description: 'Type settings; a formula\'s expression shows the current field names', resolve: (f, _a, ctx) => ctx.services.fields.apiConfig(f) }),
    indexed: t.exposeBoolean('indexed'),
    computing: t.field({
      type: 'JSON', nullable: true,
      description: 'A computed field still being computed in the background: {done, total} records; null once every value is current',
      resolve: (f, _a, ctx) => ctx.services.fields.fillProgress(f),
    }),
  }),
});
const FieldPage = pageOf<FieldDef>('Field', Field);

/**
 * A new field or the keys of a field to change. `type` stays a String (a FieldType value): GraphQL callers send it as
 * a string literal, and the field service names an unknown type in its 400. `config` is open-ended (per type).
 */
export const FieldInput = builder.inputType('FieldInput', {
  fields: (t) => ({
    name: t.string({ required: false }),
    type: t.string({ required: false, description: 'A FieldType value, e.g. text or single_select' }),
    required: t.boolean({ required: false }),
    options: t.stringList({ required: false, description: 'Choices of single_select and multi_select' }),
    config: t.field({ type: 'JSON', required: false, description: 'Type settings: number {precision}, rating {max}, link {table_id}, formula {expression}, lookup {link_field, field}, rollup {link_field, field, function}, count {link_field}' }),
    indexed: t.boolean({ required: false }),
  }),
});

builder.queryFields((t) => ({
  fields: t.field({
    type: FieldPage,
    args: { tableId: t.arg.id({ required: true }), ...pageArgs(t.arg) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'viewer' } }),
    resolve: (_r, a, ctx) => ctx.services.fields.listFields(a.tableId, a.page, a.pageSize),
  }),
}));

builder.mutationFields((t) => ({
  createField: t.field({
    type: Field,
    args: { tableId: t.arg.id({ required: true }), input: t.arg({ type: FieldInput, required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.fields.createField(a.tableId, a.input, ctx.actor),
  }),
  updateField: t.field({
    type: Field,
    args: { tableId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), input: t.arg({ type: FieldInput, required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.fields.updateField(a.tableId, a.id, a.input, ctx.actor),
  }),
  deleteField: t.field({
    type: DeleteResult,
    args: { tableId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    authScopes: (_r, a) => ({ baseRole: { tableId: a.tableId, role: 'admin' } }),
    resolve: (_r, a, ctx) => ctx.services.fields.deleteField(a.tableId, a.id, ctx.actor),
  }),
}));
