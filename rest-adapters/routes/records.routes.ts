// /api/v1/tables/{table_id}/records: record pages with filter and sort, single writes and batches.
import { restPage, restRecord, SELECT } from '../mappers.js';
import { ref, type Route } from '../route.js';
import { pageSchema } from '../schemas.js';
import { body, deleted, pageQuery, pageVars } from './common.js';

const valuesBody = body({ fields: { type: 'object', description: 'Values keyed by field name (or id)' } }, ['fields']);

export const recordRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/records', family: 'v1', tag: 'records',
    summary: 'A page of records, filtered and sorted (default: creation order)',
    query: {
      ...pageQuery(20),
      filter: { type: 'string', description: 'JSON: {"conjunction":"and"|"or","conditions":[{"field","operator","value"} or groups]}' },
      sort: { type: 'string', description: 'JSON: [{"field","direction":"asc"|"desc"}], at most 5 keys' },
      view_id: { type: 'string', description: 'A view of the table: its filter ANDed with filter, its sort unless sort is given, its hidden fields left out' },
    },
    document: `query Records($tableId: ID!, $page: Int, $pageSize: Int, $filter: JSON, $sort: JSON, $viewId: ID) { records(tableId: $tableId, page: $page, pageSize: $pageSize, filter: $filter, sort: $sort, viewId: $viewId) { ${SELECT.page(SELECT.record)} } }`,
    variables: ({ params, query }) => ({ tableId: params.table_id, ...pageVars(query), filter: query.filter, sort: query.sort, viewId: query.view_id }),
    result: (d) => restPage(restRecord)(d.records),
    response: pageSchema('Record'),
  },
  {
    method: 'POST', path: '/api/v1/tables/{table_id}/records', family: 'v1', tag: 'records', status: 201, summary: 'Create a record',
    body: valuesBody,
    document: `mutation CreateRecord($tableId: ID!, $fields: JSON!) { createRecord(tableId: $tableId, fields: $fields) { ${SELECT.record} } }`,
    variables: ({ params, body: b }) => ({ tableId: params.table_id, fields: b.fields }),
    result: (d) => restRecord(d.createRecord),
    response: ref('Record'),
  },
  {
    method: 'POST', path: '/api/v1/tables/{table_id}/records/batch', family: 'v1', tag: 'records',
    summary: 'Create, update or delete 1 to 1000 records, all or nothing',
    body: body({
      action: { enum: ['create', 'update', 'delete'] },
      records: { type: 'array', items: { type: ['object', 'string'] }, description: 'create: {fields}; update: {id, fields}; delete: {id}' },
    }, ['action', 'records']),
    document: `mutation BatchRecords($tableId: ID!, $action: BatchAction!, $records: JSON!) { batchRecords(tableId: $tableId, action: $action, records: $records) { items { ${SELECT.record} } deleted } }`,
    variables: ({ params, body: b }) => ({ tableId: params.table_id, action: b.action, records: b.records }),
    result: (d) => (d.batchRecords.deleted ? { deleted: d.batchRecords.deleted } : { items: d.batchRecords.items.map(restRecord) }),
    response: {
      oneOf: [
        { type: 'object', properties: { items: { type: 'array', items: ref('Record') } }, required: ['items'], additionalProperties: false },
        { type: 'object', properties: { deleted: { type: 'array', items: { type: 'string' } } }, required: ['deleted'], additionalProperties: false },
      ],
    },
  },
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/records/{record_id}', family: 'v1', tag: 'records', summary: 'One record',
    document: `query Record($tableId: ID!, $id: ID!) { record(tableId: $tableId, id: $id) { ${SELECT.record} } }`,
    variables: ({ params }) => ({ tableId: params.table_id, id: params.record_id }),
    result: (d) => restRecord(d.record),
    response: ref('Record'),
  },
  {
    method: 'PUT', path: '/api/v1/tables/{table_id}/records/{record_id}', family: 'v1', tag: 'records', summary: 'Change some values of a record',
    body: valuesBody,
    document: `mutation UpdateRecord($tableId: ID!, $id: ID!, $fields: JSON!) { updateRecord(tableId: $tableId, id: $id, fields: $fields) { ${SELECT.record} } }`,
    variables: ({ params, body: b }) => ({ tableId: params.table_id, id: params.record_id, fields: b.fields }),
    result: (d) => restRecord(d.updateRecord),
    response: ref('Record'),
  },
  {
    method: 'DELETE', path: '/api/v1/tables/{table_id}/records/{record_id}', family: 'v1', tag: 'records', summary: 'Delete a record',
    document: 'mutation DeleteRecord($tableId: ID!, $id: ID!) { deleteRecord(tableId: $tableId, id: $id) { id deleted } }',
    variables: ({ params }) => ({ tableId: params.table_id, id: params.record_id }),
    result: (d) => d.deleteRecord,
    response: deleted,
  },
];
