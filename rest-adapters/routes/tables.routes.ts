// /api/v1/tables and /api/v1/tables/{table_id}/fields: table and field structure.
import { restField, restPage, restTable, SELECT } from '../mappers.js';
import { ref, type Route } from '../route.js';
import { pageSchema } from '../schemas.js';
import { body, deleted, pageQuery, pageVars } from './common.js';

const fieldProps = {
  name: { type: 'string' },
  type: { type: 'string', description: 'A field type (see Field.type)' },
  required: { type: 'boolean' },
  options: { type: ['array', 'null'], items: { type: 'string' }, description: 'Choices of single_select and multi_select' },
  config: { type: ['object', 'null'], description: 'Type settings: number {precision}, rating {max}, link {table_id}' },
  indexed: { type: 'boolean', description: 'Keep a database index on the field' },
};
const fieldVars = (b: Record<string, unknown>) => ({
  name: b.name, type: b.type, required: b.required, options: b.options, config: b.config, indexed: b.indexed,
});

export const tableRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/tables', family: 'v1', tag: 'tables',
    summary: 'Tables of one base (base_id), or of every base the caller can read',
    query: { base_id: { type: 'string', description: 'Only the tables of this base' }, ...pageQuery(20) },
    document: `query Tables($baseId: ID, $page: Int, $pageSize: Int) { tables(baseId: $baseId, page: $page, pageSize: $pageSize) { ${SELECT.page(SELECT.table)} } }`,
    variables: ({ query }) => ({ baseId: query.base_id, ...pageVars(query) }),
    result: (d) => restPage(restTable)(d.tables),
    response: pageSchema('Table'),
  },
  {
    method: 'POST', path: '/api/v1/tables', family: 'v1', tag: 'tables', status: 201,
    summary: 'Create a table in base_id (or the default base), optionally with fields',
    body: body({
      base_id: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' },
      fields: { type: 'array', items: body(fieldProps, ['name', 'type']) },
    }, ['name']),
    document: `mutation CreateTable($baseId: ID, $name: String!, $description: String, $fields: [FieldInput!]) { createTable(baseId: $baseId, name: $name, description: $description, fields: $fields) { ${SELECT.table} } }`,
    variables: ({ body: b }) => ({ baseId: b.base_id, name: b.name, description: b.description, fields: b.fields }),
    result: (d) => restTable(d.createTable),
    response: ref('Table'),
  },
  {
    method: 'GET', path: '/api/v1/tables/{table_id}', family: 'v1', tag: 'tables', summary: 'One table',
    document: `query Table($id: ID!) { table(id: $id) { ${SELECT.table} } }`,
    variables: ({ params }) => ({ id: params.table_id }),
    result: (d) => restTable(d.table),
    response: ref('Table'),
  },
  {
    method: 'PUT', path: '/api/v1/tables/{table_id}', family: 'v1', tag: 'tables', summary: 'Rename or describe a table',
    body: body({ name: { type: 'string' }, description: { type: 'string' } }),
    document: `mutation UpdateTable($id: ID!, $name: String, $description: String) { updateTable(id: $id, name: $name, description: $description) { ${SELECT.table} } }`,
    variables: ({ params, body: b }) => ({ id: params.table_id, name: b.name, description: b.description }),
    result: (d) => restTable(d.updateTable),
    response: ref('Table'),
  },
  {
    method: 'DELETE', path: '/api/v1/tables/{table_id}', family: 'v1', tag: 'tables',
    summary: 'Delete a table with its fields, records and the link fields pointing at it (irreversible)',
    document: 'mutation DeleteTable($id: ID!) { deleteTable(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.table_id }),
    result: (d) => d.deleteTable,
    response: deleted,
  },
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/fields', family: 'v1', tag: 'fields', summary: 'Fields of a table in display order',
    query: pageQuery(50),
    document: `query Fields($tableId: ID!, $page: Int, $pageSize: Int) { fields(tableId: $tableId, page: $page, pageSize: $pageSize) { ${SELECT.page(SELECT.field)} } }`,
    variables: ({ params, query }) => ({ tableId: params.table_id, ...pageVars(query) }),
    result: (d) => restPage(restField)(d.fields),
    response: pageSchema('Field'),
  },
  {
    method: 'POST', path: '/api/v1/tables/{table_id}/fields', family: 'v1', tag: 'fields', status: 201, summary: 'Add a field',
    body: body(fieldProps, ['name', 'type']),
    document: `mutation CreateField($tableId: ID!, $input: FieldInput!) { createField(tableId: $tableId, input: $input) { ${SELECT.field} } }`,
    variables: ({ params, body: b }) => ({ tableId: params.table_id, input: fieldVars(b) }),
    result: (d) => restField(d.createField),
    response: ref('Field'),
  },
  {
    method: 'PUT', path: '/api/v1/tables/{table_id}/fields/{field_id}', family: 'v1', tag: 'fields',
    summary: 'Change a field: rename, retype (values convert where they can), options, config, required, indexed',
    body: body(fieldProps),
    document: `mutation UpdateField($tableId: ID!, $id: ID!, $input: FieldInput!) { updateField(tableId: $tableId, id: $id, input: $input) { ${SELECT.field} } }`,
    variables: ({ params, body: b }) => ({ tableId: params.table_id, id: params.field_id, input: fieldVars(b) }),
    result: (d) => restField(d.updateField),
    response: ref('Field'),
  },
  {
    method: 'DELETE', path: '/api/v1/tables/{table_id}/fields/{field_id}', family: 'v1', tag: 'fields', summary: 'Delete a field and all its data',
    document: 'mutation DeleteField($tableId: ID!, $id: ID!) { deleteField(tableId: $tableId, id: $id) { id deleted } }',
    variables: ({ params }) => ({ tableId: params.table_id, id: params.field_id }),
    result: (d) => d.deleteField,
    response: deleted,
  },
];
