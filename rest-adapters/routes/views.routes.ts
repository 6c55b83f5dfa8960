// /api/v1 views of a table (contract section 13) and /api/share: a view shared by link, read and submitted without login.
import { ref, type Route } from '../route.js';
import { pageSchema } from '../schemas.js';
import { body, deleted, pageQuery, pageVars } from './common.js';

const VIEW = 'id tableId name type filter sort hiddenFields fieldOrder config personal locked createdBy shareId createdAt updatedAt';
type Obj = Record<string, any>;
const restView = (v: Obj) => ({
  id: v.id, table_id: v.tableId, name: v.name, type: v.type, filter: v.filter, sort: v.sort, hidden_fields: v.hiddenFields,
  field_order: v.fieldOrder, config: v.config, personal: v.personal, locked: v.locked, created_by: v.createdBy, share_id: v.shareId,
  created_at: v.createdAt, updated_at: v.updatedAt,
});
const viewProps = {
  name: { type: 'string' },
  type: { enum: ['grid', 'form', 'kanban', 'gallery', 'calendar'] },
  filter: { type: ['object', 'array', 'string', 'null'], description: 'Section 4 filter (fields by name or id; stored by id)' },
  sort: { type: ['array', 'object', 'string', 'null'], description: 'Section 4 sort keys (stored by field id)' },
  hidden_fields: { type: 'array', items: { type: 'string' }, description: 'Field names or ids' },
  field_order: { type: 'array', items: { type: 'string' }, description: 'Field names or ids, in display order' },
  config: { type: ['object', 'null'], description: 'kanban {group_field}, calendar {date_field}, gallery {cover_field?}, form {title, description, fields, submit_message}' },
  personal: { type: 'boolean' },
  locked: { type: 'boolean' },
};
const viewVars = (b: Obj) => ({
  name: b.name, type: b.type, filter: b.filter, sort: b.sort, hiddenFields: b.hidden_fields, fieldOrder: b.field_order,
  config: b.config, personal: b.personal, locked: b.locked,
});
const sharedRecord = { type: 'object', properties: { id: { type: 'string' }, fields: { type: 'object' }, created_at: { type: 'string' } }, required: ['id', 'fields', 'created_at'], additionalProperties: false };

export const viewRoutes: Route[] = [
  {
    method: 'GET', path: '/api/v1/tables/{table_id}/views', family: 'v1', tag: 'views',
    summary: 'Views of a table (others\' personal views left out); a table always has at least one',
    document: `query Views($tableId: ID!) { views(tableId: $tableId) { ${VIEW} } }`,
    variables: ({ params }) => ({ tableId: params.table_id }),
    result: (d) => d.views.map(restView),
    response: { type: 'array', items: ref('View') },
  },
  {
    method: 'POST', path: '/api/v1/tables/{table_id}/views', family: 'v1', tag: 'views', status: 201, summary: 'Create a view (base editors)',
    body: body(viewProps, ['name']),
    document: `mutation CreateView($tableId: ID!, $input: ViewInput!) { createView(tableId: $tableId, input: $input) { ${VIEW} } }`,
    variables: ({ params, body: b }) => ({ tableId: params.table_id, input: viewVars(b) }),
    result: (d) => restView(d.createView),
    response: ref('View'),
  },
  {
    method: 'GET', path: '/api/v1/views/{view_id}', family: 'v1', tag: 'views', summary: 'One view',
    document: `query View($id: ID!) { view(id: $id) { ${VIEW} } }`,
    variables: ({ params }) => ({ id: params.view_id }),
    result: (d) => restView(d.view),
    response: ref('View'),
  },
  {
    method: 'PUT', path: '/api/v1/views/{view_id}', family: 'v1', tag: 'views',
    summary: 'Change a view (a locked one: base admins; only they set or clear locked)',
    body: body(viewProps),
    document: `mutation UpdateView($id: ID!, $input: ViewInput!) { updateView(id: $id, input: $input) { ${VIEW} } }`,
    variables: ({ params, body: b }) => ({ id: params.view_id, input: viewVars(b) }),
    result: (d) => restView(d.updateView),
    response: ref('View'),
  },
  {
    method: 'DELETE', path: '/api/v1/views/{view_id}', family: 'v1', tag: 'views', summary: 'Delete a view (not a table\'s last one: 409)',
    document: 'mutation DeleteView($id: ID!) { deleteView(id: $id) { id deleted } }',
    variables: ({ params }) => ({ id: params.view_id }),
    result: (d) => d.deleteView,
    response: deleted,
  },
  {
    method: 'POST', path: '/api/v1/views/{view_id}/share', family: 'v1', tag: 'views', summary: 'Share a view by link (base admins)',
    document: 'mutation ShareView($id: ID!) { shareView(id: $id) { shareId url } }',
    variables: ({ params }) => ({ id: params.view_id }),
    result: (d) => ({ share_id: d.shareView.shareId, url: d.shareView.url }),
    response: { type: 'object', properties: { share_id: { type: 'string' }, url: { type: 'string' } }, required: ['share_id', 'url'], additionalProperties: false },
  },
  {
    method: 'DELETE', path: '/api/v1/views/{view_id}/share', family: 'v1', tag: 'views', summary: 'Stop sharing a view: its link answers 404',
    document: `mutation UnshareView($id: ID!) { unshareView(id: $id) { ${VIEW} } }`,
    variables: ({ params }) => ({ id: params.view_id }),
    result: (d) => restView(d.unshareView),
    response: ref('View'),
  },
  {
    method: 'GET', path: '/api/share/{share_id}', family: 'v1', tag: 'share', auth: false,
    summary: 'A shared view without login: name, type, config and visible fields',
    document: 'query SharedView($shareId: String!) { sharedView(shareId: $shareId) { name type config fields } }',
    variables: ({ params }) => ({ shareId: params.share_id }),
    result: (d) => d.sharedView,
    response: {
      type: 'object', additionalProperties: false, required: ['name', 'type', 'config', 'fields'],
      properties: { name: { type: 'string' }, type: { type: 'string' }, config: { type: 'object' }, fields: { type: 'array', items: { type: 'object' } } },
    },
  },
  {
    method: 'GET', path: '/api/share/{share_id}/records', family: 'v1', tag: 'share', auth: false,
    summary: 'A page of a shared view\'s records, visible fields only, without login (not for forms)',
    query: pageQuery(20),
    document: 'query SharedRecords($shareId: String!, $page: Int, $pageSize: Int) { sharedRecords(shareId: $shareId, page: $page, pageSize: $pageSize) { items { id fields createdAt } total page pageSize } }',
    variables: ({ params, query }) => ({ shareId: params.share_id, ...pageVars(query) }),
    result: (d) => ({
      items: d.sharedRecords.items.map((r: Obj) => ({ id: r.id, fields: r.fields, created_at: r.createdAt })),
      total: d.sharedRecords.total, page: d.sharedRecords.page, page_size: d.sharedRecords.pageSize,
    }),
    response: { ...pageSchema('Record'), properties: { ...(pageSchema('Record').properties as Obj), items: { type: 'array', items: sharedRecord } } },
  },
  {
    method: 'POST', path: '/api/share/{share_id}/submit', family: 'v1', tag: 'share', auth: false, status: 201,
    summary: 'Submit a shared form without login: its fields only, 30 a minute from one address',
    body: body({ fields: { type: 'object', description: 'Values keyed by field name or id' } }, ['fields']),
    document: 'mutation SubmitSharedForm($shareId: String!, $fields: JSON!) { submitSharedForm(shareId: $shareId, fields: $fields) { id } }',
    variables: ({ params, body: b }) => ({ shareId: params.share_id, fields: b.fields }),
    result: (d) => ({ id: d.submitSharedForm.id }),
    response: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
  },
];
