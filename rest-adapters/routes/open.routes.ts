// /api/open/v1: the Open API for applications (spec 1, 4.3), with scopes, the base allow-list and rate limits.
import { openBase, openField, openPage, openRecord, openTable, SELECT } from '../mappers.js';
import { ref, type Route } from '../route.js';

const P = '/api/open/v1/bases';
const pageQuery = {
  page: { type: 'integer' as const, description: 'Page number (default 1)' },
  per_page: { type: 'integer' as const, description: 'Records per page (default 20; above 200 it is clamped to 200)' },
};
const writeBody = { type: 'object', description: 'Values keyed by field id or exact field name, bare or wrapped under "values"' };
const ids = (params: Record<string, string>) => ({ baseId: params.base_id, tableId: params.table_id });
const record = `{ ${SELECT.openRecord} }`;

export const openRoutes: Route[] = [
  {
    method: 'GET', path: `${P}`, family: 'open', tag: 'open-bases', summary: 'Bases in the application\'s allow-list (base:read)',
    document: `query OpenBases { openBases { ${SELECT.openBase} } }`,
    variables: () => ({}),
    result: (d) => d.openBases.map(openBase),
    response: { type: 'array', items: ref('BaseSummary') },
  },
  {
    method: 'GET', path: `${P}/{base_id}`, family: 'open', tag: 'open-bases', summary: 'A base with its tables (base:read)',
    document: `query OpenBase($baseId: ID!) { openBase(baseId: $baseId) { ${SELECT.openBase} tables { ${SELECT.openTable} } } }`,
    variables: ({ params }) => ({ baseId: params.base_id }),
    result: (d) => ({ ...openBase(d.openBase), tables: d.openBase.tables.map(openTable) }),
    response: ref('BaseDetail'),
  },
  {
    method: 'GET', path: `${P}/{base_id}/tables`, family: 'open', tag: 'open-tables', summary: 'Tables of a base (table:read)',
    document: `query OpenTables($baseId: ID!) { openTables(baseId: $baseId) { ${SELECT.openTable} } }`,
    variables: ({ params }) => ({ baseId: params.base_id }),
    result: (d) => d.openTables.map(openTable),
    response: { type: 'array', items: ref('Table') },
  },
  {
    method: 'GET', path: `${P}/{base_id}/tables/{table_id}`, family: 'open', tag: 'open-tables', summary: 'A table with its fields (table:read)',
    document: `query OpenTable($baseId: ID!, $tableId: ID!) { openTable(baseId: $baseId, tableId: $tableId) { ${SELECT.openTable} fields { ${SELECT.openField} } } }`,
    variables: ({ params }) => ids(params),
    result: (d) => ({ ...openTable(d.openTable), fields: d.openTable.fields.map(openField) }),
    response: ref('TableDetail'),
  },
  {
    method: 'GET', path: `${P}/{base_id}/tables/{table_id}/fields`, family: 'open', tag: 'open-tables', summary: 'Field metadata (field:read)',
    document: `query OpenFields($baseId: ID!, $tableId: ID!) { openFields(baseId: $baseId, tableId: $tableId) { ${SELECT.openField} } }`,
    variables: ({ params }) => ids(params),
    result: (d) => d.openFields.map(openField),
    response: { type: 'array', items: ref('Field') },
  },
  {
    method: 'GET', path: `${P}/{base_id}/tables/{table_id}/records`, family: 'open', tag: 'open-records', paginated: true,
    summary: 'A page of records, keyed by field id (record:read); filter and sort as in /api/v1',
    query: {
      ...pageQuery,
      filter: { type: 'string', description: 'JSON filter, as in /api/v1' },
      sort: { type: 'string', description: 'JSON sort keys, as in /api/v1' },
      view_id: { type: 'string', description: 'A view of the table: its filter ANDed with filter, its sort unless sort is given, its visible fields' },
    },
    document: `query OpenRecords($baseId: ID!, $tableId: ID!, $page: Int, $perPage: Int, $filter: JSON, $sort: JSON, $viewId: ID) { openRecords(baseId: $baseId, tableId: $tableId, page: $page, perPage: $perPage, filter: $filter, sort: $sort, viewId: $viewId) { items ${record} total page pageSize } }`,
    variables: ({ params, query }) => ({ ...ids(params), page: query.page, perPage: query.per_page, filter: query.filter, sort: query.sort, viewId: query.view_id }),
    result: (d) => openPage(openRecord)(d.openRecords),
    response: { type: 'array', items: ref('Record') },
  },
  {
    method: 'GET', path: `${P}/{base_id}/tables/{table_id}/records/search`, family: 'open', tag: 'open-records', paginated: true,
    summary: 'Records holding every word of q in a text-like value, case-insensitive (record:read)',
    query: { q: { type: 'string', description: 'Words to find (required)' }, ...pageQuery },
    document: `query OpenSearchRecords($baseId: ID!, $tableId: ID!, $q: String, $page: Int, $perPage: Int) { openSearchRecords(baseId: $baseId, tableId: $tableId, q: $q, page: $page, perPage: $perPage) { items ${record} total page pageSize } }`,
    variables: ({ params, query }) => ({ ...ids(params), q: query.q, page: query.page, perPage: query.per_page }),
    result: (d) => openPage(openRecord)(d.openSearchRecords),
    response: { type: 'array', items: ref('Record') },
  },
  {
    method: 'GET', path: `${P}/{base_id}/tables/{table_id}/records/{record_id}`, family: 'open', tag: 'open-records', summary: 'One record (record:read)',
    document: `query OpenRecord($baseId: ID!, $tableId: ID!, $recordId: ID!) { openRecord(baseId: $baseId, tableId: $tableId, recordId: $recordId) ${record} }`,
    variables: ({ params }) => ({ ...ids(params), recordId: params.record_id }),
    result: (d) => openRecord(d.openRecord),
    response: ref('Record'),
  },
  {
    method: 'POST', path: `${P}/{base_id}/tables/{table_id}/records`, family: 'open', tag: 'open-records', status: 201,
    summary: 'Create a record (record:write); the application is its creator',
    body: writeBody,
    document: `mutation OpenCreateRecord($baseId: ID!, $tableId: ID!, $values: JSON!) { openCreateRecord(baseId: $baseId, tableId: $tableId, values: $values) ${record} }`,
    variables: ({ params, body: b }) => ({ ...ids(params), values: b }),
    result: (d) => openRecord(d.openCreateRecord),
    response: ref('Record'),
  },
  {
    method: 'PUT', path: `${P}/{base_id}/tables/{table_id}/records/{record_id}`, family: 'open', tag: 'open-records',
    summary: 'Change some values of a record (record:write)',
    body: writeBody,
    document: `mutation OpenUpdateRecord($baseId: ID!, $tableId: ID!, $recordId: ID!, $values: JSON!) { openUpdateRecord(baseId: $baseId, tableId: $tableId, recordId: $recordId, values: $values) ${record} }`,
    variables: ({ params, body: b }) => ({ ...ids(params), recordId: params.record_id, values: b }),
    result: (d) => openRecord(d.openUpdateRecord),
    response: ref('Record'),
  },
  {
    method: 'DELETE', path: `${P}/{base_id}/tables/{table_id}/records/{record_id}`, family: 'open', tag: 'open-records',
    summary: 'Delete a record (record:write)',
    document: 'mutation OpenDeleteRecord($baseId: ID!, $tableId: ID!, $recordId: ID!) { openDeleteRecord(baseId: $baseId, tableId: $tableId, recordId: $recordId) { id deleted } }',
    variables: ({ params }) => ({ ...ids(params), recordId: params.record_id }),
    result: (d) => d.openDeleteRecord,
    response: ref('Deleted'),
  },
];
